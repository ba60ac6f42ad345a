// SPDX-License-Identifier: Apache-2.0
// The `gua top` frame: header with the sort and filter, the `gua now` table with history lines,
// the key help over it, and on a terminal a footer on the last row.
#include "core/duration.hpp"
#include "core/printable.hpp"
#include "live/render.hpp"
#include "live/signal.hpp"

#include <fmt/format.h>

#include <vector>

namespace gua::live {

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = text.find('\n', at);
        const std::size_t stop = end == std::string::npos ? text.size() : end;
        out.push_back(text.substr(at, stop - at));
        at = stop + 1;
    }
    return out;
}

std::string header_of(const TopView& view, DurationUs refresh_us) {
    std::string out = fmt::format("gua top — refresh every {} · sort: {}",
                                  format_duration(refresh_us), sort_name(view.sort));
    if (!view.filter.empty()) {
        out += " · filter: " + printable(view.filter);
    }
    return out + " · ? help · q quits";
}

std::vector<std::string> help_lines() {
    return {"",
            "Keys (? or Esc closes this help)",
            "  i      sort by idle-held time, longest first (again: the default order)",
            "  m      sort by memory, most first (again: the default order)",
            "  s      sort by SM utilization, highest first (again: the default order)",
            "  u      sort by user (again: the default order)",
            "  /      filter by user: type part of a name, Enter applies;",
            "         Esc or an empty Enter clears the filter",
            "  t      show the holders under their parent processes (again: a list)",
            "  ↑ ↓    select a holder",
            "  k      send the selected holder SIGTERM, K SIGKILL: each asks first (y sends,",
            "         any other key cancels); only your own processes (root: any); off with",
            "         --readonly",
            "  ?      show or hide this help",
            "  q  Esc quit",
            "Default order: idle-held memory × time, then memory. CPU and RSS: the holder's",
            "host CPU over the last refresh and resident memory, from /proc.",
            "History line, oldest left, one cell per time slice, the state of most of it:",
            "  █ active  ▄ idle-held  ▁ truly idle  × unmeasured  · no card-tick",
            ""};
}

std::string footer_of(const TopView& view) {
    if (view.editing) {
        return "filter users: " + printable(view.draft) + "▏ (Enter applies, Esc clears)";
    }
    if (view.confirm) {
        const TopView::Confirm& c = *view.confirm;
        return fmt::format("send {} to pid {} ({}: {})? y sends, any other key cancels",
                           signal_name(c.sig), c.pid, printable(c.user), printable(c.command));
    }
    if (!view.message.empty()) {
        return printable(view.message);
    }
    return view.readonly
               ? "i idle · m memory · s SM · u user · / filter · t tree · read-only · q quit"
               : "i idle · m memory · s SM · u user · / filter · t tree · ↑↓ k K · ? help · q quit";
}

} // namespace

std::string render_top_frame(const NowModel& m, const TopView& view, const NowTextOptions& o,
                             DurationUs refresh_us, int rows) {
    std::vector<std::string> body = lines_of(render_now_text(m, o));
    if (view.help) {
        const std::vector<std::string> help = help_lines();
        body.resize(std::max(body.size(), help.size()));
        std::copy(help.begin(), help.end(), body.begin());
    }
    if (rows > 0) {
        const auto room = static_cast<std::size_t>(std::max(rows - 2, 0));
        if (body.size() > room && room > 0) {
            const std::size_t cut = body.size() - (room - 1);
            body.resize(room - 1);
            body.push_back(fmt::format("… {} more lines (a taller terminal shows them)", cut));
        }
        body.resize(room);
    }
    std::string out = clip_to_columns(header_of(view, refresh_us), o.columns);
    for (const std::string& line : body) {
        out += "\n" + clip_to_columns(line, o.columns);
    }
    if (rows <= 0) {
        return out + "\n";
    }
    return rows > 1 ? out + "\n" + clip_to_columns(footer_of(view), o.columns) : out;
}

} // namespace gua::live
