// What the gua-counter and dcgm fleet reports share: model header, coverage, identities, hosts.
#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "core/version.hpp"
#include "report/fleet.hpp"
#include "report/shares.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace gua::report {

ReportModel start_fleet_model(const PrometheusClient& prom, const BuildOptions& options,
                              const TimeZone& tz) {
    if (options.gpu || options.user || options.interval_override) {
        throw Fatal("--gpu, --user and --interval are not supported with --prometheus",
                    ExitCode::usage);
    }
    ReportModel m;
    m.gua_version = k_version;
    m.host = "fleet via Prometheus " + prom.url();
    m.window_from = options.from;
    m.window_to = options.to;
    m.window_label = options.window_label;
    m.time_zone = tz.name();
    m.active_threshold_pct = options.thresholds.active_util_pct;
    m.held_threshold_mib = options.thresholds.held_mib;
    return m;
}

std::int64_t bounded_round(double value, double max) {
    return value > 0 ? std::llround(std::min(value, max)) : 0;
}

DurationUs coverage_step(TimeUs from, TimeUs to) {
    return std::max<DurationUs>((to - from) / 1000, k_us_per_second);
}

SeriesPresence presence_of(const std::vector<PromSeries>& series, const std::string& host_label,
                           TimeUs from, TimeUs to, DurationUs step) {
    SeriesPresence p;
    const auto points = static_cast<double>(std::max<DurationUs>((to - from) / step + 1, 1));
    std::set<TimeUs> any;
    for (const PromSeries& s : series) {
        const auto it = s.labels.find(host_label);
        const std::string host = it != s.labels.end() ? it->second : "";
        p.host_share[host] =
            std::min(1.0, p.host_share[host] + static_cast<double>(s.values.size()) / points);
        for (const auto& [t, v] : s.values) {
            any.insert(t);
        }
    }
    if (!any.empty()) {
        p.first = *any.begin();
        p.last_end = std::min(to, *any.rbegin() + step);
        const DurationUs allowed = std::max<DurationUs>(2 * step, k_us_per_minute);
        TimeUs previous = *any.begin();
        for (const TimeUs t : any) {
            if (t - previous > allowed) {
                p.gaps.emplace_back(previous + step, t);
            }
            previous = t;
        }
    }
    double total = 0;
    for (const auto& [host, share] : p.host_share) {
        total += share;
    }
    p.covered_share = p.host_share.empty() ? 0 : total / static_cast<double>(p.host_share.size());
    return p;
}

void rank_identities(ReportModel& m, std::vector<IdentityRow> rows, std::size_t top) {
    for (IdentityRow& r : rows) {
        r.gpu_hours = r.active_hours + r.idle_held_hours;
        r.idle_held_share = r.gpu_hours > 0 ? r.idle_held_hours / r.gpu_hours : 0;
    }
    std::sort(rows.begin(), rows.end(), [](const IdentityRow& a, const IdentityRow& b) {
        return a.gpu_hours != b.gpu_hours ? a.gpu_hours > b.gpu_hours : a.name < b.name;
    });
    m.identities_total = rows.size();
    if (rows.size() > top) {
        rows.resize(top);
    }
    m.identities = std::move(rows);
}

void summarise_hosts(ReportModel& m, const std::map<std::string, audit::StateTimes>& states,
                     const SeriesPresence& presence, const std::string& url) {
    for (const auto& [host, t] : states) {
        HostRow row;
        row.host = host;
        row.shares = shares_of(t);
        for (const GpuRow& g : m.gpus) {
            if (g.host == host) {
                ++row.gpus;
                row.samples += g.samples;
            }
        }
        const auto it = presence.host_share.find(host);
        row.covered_share = it != presence.host_share.end() ? it->second : 0;
        m.hosts.push_back(row);
    }
    m.host = fmt::format("fleet of {} host{} via Prometheus {}", m.hosts.size(),
                         m.hosts.size() == 1 ? "" : "s", url);
}

} // namespace gua::report
