// SPDX-License-Identifier: Apache-2.0
// The `gua now` table and the `gua top` frame.
#include "core/bar.hpp"
#include "core/duration.hpp"
#include "core/printable.hpp"
#include "core/units.hpp"
#include "live/holders_text.hpp"
#include "live/render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace gua::live {

namespace {

std::string paint(bool color, std::string_view code, const std::string& s) {
    return color ? fmt::format("\x1b[{}m{}\x1b[0m", code, s) : s;
}

std::string bar(const Shares& s, int width, bool color) {
    const auto n = bar_cells(std::array<double, 3>{s.active, s.idle_held, s.truly_idle}, width);
    if (n[0] + n[1] + n[2] == 0) {
        return repeat(" ", width);
    }
    return paint(color, "32", repeat("█", n[0])) + paint(color, "33", repeat("▒", n[1])) +
           paint(color, "2", repeat("░", n[2]));
}

std::string_view glyph_of(audit::SliceState s) {
    switch (s) {
    case audit::SliceState::active:
        return "█";
    case audit::SliceState::idle_held:
        return "▄";
    case audit::SliceState::truly_idle:
        return "▁";
    case audit::SliceState::unmeasured:
        return "×";
    case audit::SliceState::no_data:
        break;
    }
    return "·";
}

std::string_view colour_of(audit::SliceState s) {
    switch (s) {
    case audit::SliceState::active:
        return "32";
    case audit::SliceState::idle_held:
        return "33";
    case audit::SliceState::truly_idle:
        return "2";
    case audit::SliceState::unmeasured:
        return "31";
    case audit::SliceState::no_data:
        break;
    }
    return "2";
}

/// The history line's cells, oldest left; runs of one state share one colour.
std::string history_line(const std::vector<audit::StateSlice>& slices, bool color) {
    std::string out = "     ";
    for (std::size_t i = 0; i < slices.size();) {
        std::size_t j = i;
        while (j < slices.size() && slices[j].state == slices[i].state) {
            ++j;
        }
        out += paint(color, colour_of(slices[i].state),
                     repeat(glyph_of(slices[i].state), static_cast<int>(j - i)));
        i = j;
    }
    return out;
}

std::string ago(TimeUs now, TimeUs then) {
    const DurationUs d = now - then;
    return d < k_us_per_second ? std::string("just now")
                               : format_duration(d / k_us_per_second * k_us_per_second) + " ago";
}

void source_line(std::string& out, const NowModel& m) {
    if (m.origin == Origin::daemon) {
        out += fmt::format("from the daemon's database {} (every {}", m.db_path,
                           format_duration(m.interval_us));
        if (m.last_tick_end) {
            out += ", last tick ended " + ago(m.now, *m.last_tick_end);
        }
        out += ")\n";
    } else {
        out += m.note + "\n";
    }
}

/// "     last Xid 79, 3h ago: the GPU has fallen off the bus (hardware fault; pid 534 python3,
/// alice)": the process only when one is named.
std::string xid_line(const LastXid& x, TimeUs now, bool color) {
    std::string who;
    if (x.pid) {
        who = fmt::format("; pid {}", *x.pid);
        who += x.command.empty() ? "" : " " + printable(x.command);
        who += x.user.empty() ? "" : ", " + printable(x.user);
    }
    return "     " +
           paint(color, x.whose == "application" ? "33" : "31",
                 fmt::format("last Xid {}, {}", x.code, ago(now, x.at))) +
           fmt::format(": {} ({} fault{})", x.meaning, x.whose, who);
}

void gpus(std::string& out, const NowModel& m, const NowTextOptions& o) {
    out += fmt::format("GPU  model                      util    memory used/total  state       "
                       "last {}\n",
                       format_duration(m.recent_window_us));
    if (m.gpus.empty()) {
        out += "  (no GPUs)\n";
    }
    for (const GpuNow& g : m.gpus) {
        const std::string util = g.util_pct ? fmt::format("{:.0f}%", *g.util_pct) : "n/a";
        const std::string memory =
            fmt::format("{} / {}", format_gib(g.mem_used_mib), format_gib(g.mem_total_mib));
        out += fmt::format("{:>3}  {:<25}  {:>4}  {:>19}  {:<10}  {}\n", g.index,
                           printable(g.model.substr(0, 25)), util, memory, g.state,
                           bar(g.recent, o.bar_width, o.color));
        if (g.last_xid) {
            out += xid_line(*g.last_xid, m.now, o.color) + "\n";
        }
        if (o.history && !g.recent_states.empty()) {
            out += history_line(g.recent_states, o.color) + "\n";
        }
    }
    const bool any = std::any_of(m.gpus.begin(), m.gpus.end(),
                                 [](const GpuNow& g) { return !g.recent_states.empty(); });
    if (o.history && any) {
        out += fmt::format("     last {}: █ active ▄ idle-held ▁ truly idle × unmeasured · none\n",
                           format_duration(m.history_us));
    }
}

void decisions(std::string& out, const NowModel& m, const NowTextOptions& o) {
    if (m.decisions.empty()) {
        return;
    }
    out += fmt::format("\nPolicy decisions (last {})\n", format_duration(m.decisions_window_us));
    for (std::size_t i = 0; i < m.decisions.size() && i < o.max_decisions; ++i) {
        const DecisionNow& d = m.decisions[i];
        out += fmt::format(
            "  {}  {:<12} {:<9} {:<7}  {} pid {} {} idle {}  {}\n",
            format_iso8601(d.time_us).substr(11), printable(d.rule.substr(0, 12)), d.action,
            d.dry_run ? "dry-run" : "real", printable(d.user), d.pid, format_gib(d.memory_mib),
            format_duration(d.idle_us / k_us_per_second * k_us_per_second), printable(d.outcome));
    }
    if (m.decisions.size() > o.max_decisions) {
        out += fmt::format("  … and {} more (gua report shows them all)\n",
                           m.decisions.size() - o.max_decisions);
    }
}

} // namespace

std::string format_gib(std::optional<std::int64_t> mib) {
    return mib ? gua::format_gib(static_cast<double>(*mib)) : "?";
}

std::string clip_to_columns(const std::string& line, int columns) {
    if (columns <= 0) {
        return line;
    }
    // Columns the line takes, and the byte where the first `columns - 1` of them end.
    int used = 0;
    std::size_t cut = std::string::npos;
    bool escapes = false;
    for (std::size_t i = 0; i < line.size();) {
        if (line[i] == '\x1b') {
            escapes = true;
            const std::size_t end = line.find_first_of("ABCDEFGHJKSTfmhlsu", i + 1);
            i = end == std::string::npos ? line.size() : end + 1;
            continue;
        }
        if (used == columns - 1) {
            cut = i;
        }
        ++used;
        ++i;
        while (i < line.size() && (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) {
            ++i; // UTF-8 continuation bytes
        }
    }
    if (used <= columns) {
        return line;
    }
    return line.substr(0, cut) + "…" + (escapes ? "\x1b[0m" : "");
}

std::string render_now_text(const NowModel& m, const NowTextOptions& o) {
    std::string out =
        fmt::format("gua now — {}  {}\n", m.host.empty() ? "?" : m.host, format_iso8601(m.now));
    source_line(out, m);
    out += "\n";
    gpus(out, m, o);
    out += "\n";
    render_holders(out, m, o);
    decisions(out, m, o);
    // Host, state and note come from the database or the driver: escaped like every name.
    out = terminal_text(out, o.color);
    if (o.columns <= 0) {
        return out;
    }
    std::string clipped;
    for (std::size_t at = 0; at < out.size();) {
        const std::size_t end = out.find('\n', at);
        const std::size_t stop = end == std::string::npos ? out.size() : end;
        clipped += clip_to_columns(out.substr(at, stop - at), o.columns);
        clipped += end == std::string::npos ? "" : "\n";
        at = stop + 1;
    }
    return clipped;
}

int history_cells(int columns) {
    return columns > 0 ? std::max(columns - 5, 1) : 60;
}

} // namespace gua::live
