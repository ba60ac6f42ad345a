// SPDX-License-Identifier: Apache-2.0
// A fleet of gua daemons as a Prometheus server scrapes them, for the fleet scale test: hosts of
// 8 GPUs shared by a few users, with jobs, idle-held tails and free spells on a day/night/weekend
// pattern, and the ground truth of each card and user integrated from the scenario itself.
#pragma once

#include "core/time.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gua::bench {

/// Names the scenario: change it with any change to what ScaleFleet generates (cached data sets
/// are regenerated when it differs).
inline constexpr const char* k_scale_data_version = "scale-1";

/// Shape of the simulated fleet.
struct ScaleOptions {
    int hosts = 125;
    int gpus_per_host = 8;
    TimeUs start = 0; ///< the daemons' first tick starts here (plus each host's phase)
    TimeUs end = 0;   ///< nothing is ticked or scraped at or after this time
    DurationUs tick_us = 30 * k_us_per_second;   ///< the daemons' [daemon] interval
    DurationUs scrape_us = 30 * k_us_per_second; ///< Prometheus's scrape_interval
    std::uint64_t seed = 7;
    /// What a month of a real fleet has besides the jobs: daemon restarts with downtime (counters
    /// survive them), one host whose daemon starts over on a fresh database (its counters reset),
    /// one host added and one removed part way, missed scrapes, rare card-ticks without a
    /// utilization reading (an `unmeasured` series appears). Off: none of them.
    bool churn = true;
    /// Only the ground truth: the same scenario (the same random draws) without feeding
    /// exporter::Metrics or writing scrapes.
    bool truth_only = false;
};

/// Card time per state, in seconds.
struct StateSeconds {
    double active = 0;
    double idle_held = 0;
    double truly_idle = 0;
    double unmeasured = 0;
};

/// A user's attributed card time, in seconds, and how many cards it was on.
struct UserSeconds {
    double active = 0;
    double idle_held = 0;
    std::size_t cards = 0;
};

/// Ground truth of one report window [from, to): recorded card time by state per card (keyed by
/// the Prometheus `instance` label and the card's uuid) and per user (by `user` label).
struct WindowTruth {
    TimeUs from = 0;
    TimeUs to = 0;
    std::map<std::pair<std::string, std::string>, StateSeconds> cards;
    std::map<std::string, int> card_index; ///< uuid → driver index
    std::map<std::string, UserSeconds> users;
    /// The fleet's card time by UTC weekday (0 = Sunday) and hour, as the report's heatmap.
    std::array<std::array<StateSeconds, 24>, 7> heatmap{};
};

/// The family names the generator writes by default: every family `gua report --prometheus`
/// reads, the card info and memory gauges, and the daemon's start time.
const std::vector<std::string>& report_families();

/// Simulates the fleet scrape by scrape. Each host feeds its ticks to gua's own
/// exporter::Metrics (the code behind `gua daemon --listen`) and each scrape writes what that
/// daemon's /metrics would show, so names, labels and counter semantics are the daemon's.
class ScaleFleet {
  public:
    /// `windows` are the report windows whose ground truth is integrated; `families` the metric
    /// families written (empty: all the daemon exports).
    ScaleFleet(const ScaleOptions& options, std::vector<std::pair<TimeUs, TimeUs>> windows,
               std::vector<std::string> families);
    ~ScaleFleet();
    ScaleFleet(const ScaleFleet&) = delete;
    ScaleFleet& operator=(const ScaleFleet&) = delete;

    /// Runs every host up to `until` (exclusive) and appends each scrape before it to `out` as
    /// OpenMetrics sample lines with `instance` and `job` labels and a timestamp in seconds;
    /// each series' samples come in time order. `flush` is called whenever `out` grows past
    /// 1 MiB, to write it out and clear it.
    void advance(TimeUs until, std::string& out, const std::function<void(std::string&)>& flush);

    /// The ground truth of each window, complete once advance() has passed the window's end.
    std::vector<WindowTruth> truth() const;
    /// Samples written so far.
    std::uint64_t samples() const { return m_samples; }
    /// Series written so far (distinct label sets).
    std::size_t series() const;

    struct Host;

  private:
    void record_tick(Host& h);
    void scrape(Host& h, TimeUs at, std::string& out);

    ScaleOptions m_options;
    std::vector<std::unique_ptr<Host>> m_hosts;
    std::vector<WindowTruth> m_truth;
    /// Per window, per user: the cards (host × 64 + index) it had a process on.
    std::vector<std::map<std::string, std::set<int>>> m_user_cards;
    std::vector<std::string> m_families;
    std::uint64_t m_samples = 0;
};

} // namespace gua::bench
