// SPDX-License-Identifier: Apache-2.0
// `gua now --prometheus` and `gua top --prometheus`: every host's cards — their state, who holds
// them and for how long — read from the series gua daemons export, and their text and JSON.
#pragma once

#include "core/time.hpp"
#include "prometheus/api.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gua::report {

/// How far back the fleet view reads.
struct FleetNowOptions {
    std::string host_label = "instance";         ///< the label that tells hosts apart
    DurationUs window_us = 10 * k_us_per_minute; ///< raw samples read for states and holders
    DurationUs lookback_us = k_us_per_day;       ///< how far back a long streak is followed
};

/// One user holding one card now.
struct FleetHolderNow {
    std::string user;
    std::string state;                 ///< active | idle-held
    std::optional<double> memory_mib;  ///< idle-held: the user's share of the held memory
    std::optional<double> idle_held_s; ///< idle-held: how long the user has idle-held the card
    bool idle_held_at_least = false;   ///< the streak reaches back past what was read
};

/// An allocation (Slurm job, pod, reservation) that owns a card now (gua_allocation_info).
struct FleetAllocationNow {
    std::string kind;
    std::string id;
    std::string user;
    std::string account;
};

/// One card now.
struct FleetCardNow {
    std::string host;
    std::string host_status; ///< ok | down | stale (the host's FleetHostNow::status)
    int gpu = 0;
    std::string uuid;
    std::string model;
    /// active | idle-held | truly-idle | allocated-unused | unmeasured; the host's status when it
    /// is not ok (never a state then); unknown when no tick was seen in the window
    std::string state;
    std::string last_state;            ///< the state of the newest tick seen (also for down hosts)
    std::optional<double> state_for_s; ///< how long the card has been in `state` (counted time)
    bool state_for_at_least = false;   ///< the streak reaches back past what was read
    std::optional<TimeUs> as_of;       ///< scrape time of the newest tick seen
    std::optional<double> util_pct;
    std::optional<double> memory_used_mib;
    std::optional<double> memory_total_mib;
    std::vector<FleetHolderNow> holders;         ///< most memory first
    std::vector<FleetAllocationNow> allocations; ///< owning it now, where a source reports them
    double waste_mib_s = 0;                      ///< idle-held memory × time: the sort key
};

/// One host (one value of the host label).
struct FleetHostNow {
    std::string host;
    std::string status = "ok"; ///< ok | down (its scrape fails) | stale (no recent tick)
    std::string detail;        ///< why it is down or stale
    std::optional<TimeUs> last_tick;
    std::optional<TimeUs> last_scrape;
    std::optional<double> tick_interval_s;
    std::optional<double> scrape_interval_s;
    std::size_t cards = 0;
};

/// The fleet now.
struct FleetNow {
    int schema_version = 1;
    TimeUs now = 0;
    std::string url;
    std::string host_label;
    DurationUs window_us = 0;
    DurationUs lookback_us = 0;
    std::vector<FleetHostNow> hosts; ///< by name
    std::vector<FleetCardNow> cards; ///< worst waste first (fleet_order)
};

/// Reads the fleet from `prom` at `now`. Throws Fatal (one line) when the server fails or holds
/// no gua daemon series within the lookback.
FleetNow read_fleet_now(PrometheusClient& prom, const FleetNowOptions& options, TimeUs now);

/// Sorts cards worst waste first: idle-held by held memory × time, allocated-unused, truly idle,
/// unmeasured, active, then the cards of down and stale hosts; ties by host and index.
void fleet_order(std::vector<FleetCardNow>& cards);

/// The `gua now --prometheus` table; every line ends in a newline.
std::string render_fleet_now_text(const FleetNow& fleet);

/// The `gua now --prometheus --format json` document, pretty-printed, ending in a newline.
std::string render_fleet_now_json(const FleetNow& fleet);

} // namespace gua::report
