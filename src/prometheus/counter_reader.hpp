// SPDX-License-Identifier: Apache-2.0
// The reader behind read_counters(): one call's query, what its phases assemble, and the phases
// (counters.cpp: hosts, interval, telescoping; counter_lookups.cpp: lookups and increase() scans;
// counter_restarts.cpp: hosts whose daemon restarted, cut into chunks).
#pragma once

#include "prometheus/counters_parts.hpp"

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gua::report::counters_parts {

/// How far before the window a host's series are looked for.
inline constexpr DurationUs k_lookback = 5 * k_us_per_minute;

using Jobs = std::vector<std::function<void(PrometheusClient&)>>;

/// One read_counters() call: the query, what its phases assemble, and the phases in order.
class CounterReader {
  public:
    CounterReader(PrometheusClient& prom, const CounterQuery& query) : m_prom(prom), m_q(query) {}

    CounterTotals read();

  private:
    bool find_hosts();
    void measure_interval();
    std::string host_selector(const std::vector<std::string>& hosts, std::size_t first,
                              std::size_t n) const {
        return label_matcher(m_q.host_label, std::span<const std::string>(hosts.data() + first, n));
    }
    void lookups(const std::vector<std::string>& hosts, TimeUs t, Jobs& jobs);
    void on_lookup(const PromLabels& labels, double v, TimeUs t);
    void scans(const std::vector<std::string>& hosts, TimeUs a, TimeUs b, bool pods,
               std::int64_t series_per_host, Jobs& jobs);
    std::string scan_part(const CounterFamily& f, const std::string& hs, const std::string& range,
                          bool pods) const;
    void on_scan(const PromLabels& labels, double v);
    void read_edges();
    void scan_pod_series(Jobs& jobs);
    std::optional<double> started(const std::string& host, TimeUs t) const;
    void read_day_starts(const std::vector<std::string>& unstable, const std::vector<TimeUs>& days);
    void cut_chunks(const std::string& host, const std::vector<TimeUs>& days,
                    std::map<TimeUs, std::vector<std::string>>& wanted);
    void read_unstable_hosts();
    bool carried_over(const std::string& host, TimeUs a, TimeUs probe);
    std::int64_t note_series(const std::string& host);
    bool telescope_chunk(const std::string& host, TimeUs a, TimeUs b);
    void telescope_hosts();
    CounterTotals collect();

    PrometheusClient& m_prom;
    const CounterQuery& m_q;
    CounterTotals m_out;
    Assembly m_as;
    std::string m_name_matcher;
    std::string m_by_list;
    std::map<std::string, std::vector<TimeUs>> m_bounds_of;     // an unstable host's chunk bounds
    std::map<std::string, std::map<TimeUs, double>> m_start_at; // its start time at day bounds
    std::map<std::string, std::map<TimeUs, TimeUs>> m_probe_of; // host → chunk start → probe
};

} // namespace gua::report::counters_parts
