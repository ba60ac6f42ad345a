// SPDX-License-Identifier: Apache-2.0
// The holders table: one row per holder and card, or the process tree with ancestors between.
#include "live/holders_text.hpp"

#include "core/duration.hpp"
#include "core/printable.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gua::live {

namespace {

std::string where(const HolderNow& h) {
    std::string out;
    const auto add = [&](const std::string& label, const std::string& value, std::size_t n) {
        if (!value.empty()) {
            out += (out.empty() ? "" : " ") + label + ":" + value.substr(0, n);
        }
    };
    add("jupyter", h.jupyter_kernel, 8);
    add("slurm", h.slurm_job, 12);
    if (!h.pod_name.empty()) { // the node's names: namespace/pod[/container]
        add("pod",
            h.pod_namespace + "/" + h.pod_name +
                (h.container_name.empty() ? "" : "/" + h.container_name),
            std::string::npos);
    } else if (!h.container_name.empty()) {
        add("container", h.container_name, std::string::npos);
    } else {
        add("container", h.container_id, 12);
        if (h.container_id.empty()) {
            add("pod", h.pod_uid, 8);
        }
    }
    return out.empty() ? "-" : out;
}

std::string idle(const HolderNow& h) {
    if (!h.idle_held) {
        return "-";
    }
    return "idle " +
           format_duration(std::max<DurationUs>(h.idle_us / k_us_per_second, 1) * k_us_per_second);
}

/// Linear memory growth and when the card fills at that rate: "+1.2G/h 3h10m"; "-" otherwise.
std::string growth(const HolderNow& h) {
    if (!h.time_to_full_us || !h.mem_trend_mib_per_hour) {
        return "-";
    }
    const double rate = *h.mem_trend_mib_per_hour;
    const std::string per_hour =
        rate >= 1024 ? fmt::format("+{:.1f}G/h", rate / 1024.0) : fmt::format("+{:.0f}M/h", rate);
    const DurationUs unit =
        *h.time_to_full_us >= k_us_per_minute ? k_us_per_minute : k_us_per_second;
    return per_hour + " " + format_duration(*h.time_to_full_us / unit * unit);
}

/// "└─ " under a parent, indented by depth; nothing at the root or outside the tree.
std::string branch(int depth) {
    return depth > 0 ? std::string(static_cast<std::size_t>(2 * (depth - 1)), ' ') + "└─ " : "";
}

/// A holder row: marked '>' in its first column (reverse video with colour) when selected,
/// yellow with colour when idle-held.
std::string styled(std::string line, bool selected, bool idle_held, bool color) {
    if (selected) {
        line[0] = '>';
    }
    const char* code = selected ? "7" : idle_held ? "33" : nullptr;
    return color && code != nullptr ? fmt::format("\x1b[{}m{}\x1b[0m", code, line) : line;
}

std::string holder_row(const NowModel& m, const HolderNow& h, const NowTextOptions& o, int depth) {
    const std::string sm = h.sm_pct ? fmt::format("{:.0f}%", *h.sm_pct) : "n/a";
    const std::string host =
        m.host_columns ? fmt::format("  {:>4}  {:>5}", format_cpu(h.cpu_pct), format_rss(h.rss_kib))
                       : "";
    // The command line last, so a narrow terminal cuts it rather than the columns before it.
    const std::string line = fmt::format(
        "{:>3}  {:<12} {:>6}  {:<22}  {:>9}  {:>3}{}  {:<12}  {:<13}  {}{}", h.gpu_index,
        printable(h.user.substr(0, 12)), h.pid, clip_to_columns(printable(where(h)), 22),
        format_gib(h.mem_mib), sm, host, idle(h), growth(h), branch(depth),
        h.command_line.empty() ? printable(h.command) : h.command_line);
    return styled(line, m.selected_pid && *m.selected_pid == h.pid, h.idle_held, o.color) + "\n";
}

std::string ancestor_row(const NowModel& m, const TreeRow& r) {
    const std::string blank_host = m.host_columns ? std::string(13, ' ') : "";
    return fmt::format("{:>3}  {:<12} {:>6}  {:<22}  {:>9}  {:>3}{}  {:<12}  {:<13}  {}{}\n", "",
                       printable(r.user.substr(0, 12)), r.pid, "", "", "", blank_host, "", "",
                       branch(r.depth), printable(r.command));
}

} // namespace

std::string format_cpu(std::optional<double> pct) {
    return pct ? fmt::format("{:.0f}%", *pct) : "-";
}

std::string format_rss(std::optional<std::int64_t> kib) {
    if (!kib) {
        return "-";
    }
    return *kib < 10 * 1024 * 1024 ? fmt::format("{}M", (*kib + 512) / 1024)
                                   : fmt::format("{:.1f}G", static_cast<double>(*kib) / 1048576.0);
}

void render_holders(std::string& out, const NowModel& m, const NowTextOptions& o) {
    const std::string filter = printable(m.holders_filter);
    out += "Holders (" + (m.tree.empty() ? m.holders_order : "as a process tree");
    if (!m.holders_filter.empty()) {
        out += fmt::format("; users containing \"{}\", {} hidden", filter, m.holders_hidden);
    }
    out += ")\n";
    if (m.holders.empty()) {
        out += m.holders_filter.empty()
                   ? "  (no process holds GPU memory)\n"
                   : fmt::format("  (no holder of a user containing \"{}\")\n", filter);
        return;
    }
    out += fmt::format("GPU  user            pid  where                     memory   SM{}  "
                       "idle-held     growth/full    command\n",
                       m.host_columns ? "   CPU    RSS" : "");
    if (m.tree.empty()) {
        for (const HolderNow& h : m.holders) {
            out += holder_row(m, h, o, 0);
        }
        return;
    }
    for (const TreeRow& r : m.tree) {
        out += r.holder ? holder_row(m, m.holders[*r.holder], o, r.depth) : ancestor_row(m, r);
    }
}

} // namespace gua::live
