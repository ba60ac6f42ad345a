// SPDX-License-Identifier: Apache-2.0
// Fleet reports: the same ReportModel computed from a Prometheus server, across every host it
// scrapes — from gua's counters, or from dcgm-exporter's gauges on fleets without gua.
#pragma once

#include "audit/mig.hpp"
#include "core/timezone.hpp"
#include "prometheus/api.hpp"
#include "prometheus/counters.hpp"
#include "report/build.hpp"
#include "report/model.hpp"
#include "telemetry/exported_families.hpp"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gua::report {

/// The Prometheus name of a family of gua's /metrics (telemetry/exported_families.def), as the
/// fleet reader queries it.
inline std::string family(telemetry::Family f) {
    return std::string(telemetry::family_name(f));
}

/// Where and how to read a fleet.
struct FleetOptions {
    std::string url;                           ///< the Prometheus server's root URL
    std::string source = "gua";                ///< "gua" (gua's counters) or "dcgm" (dcgm-exporter)
    std::string host_label = "instance";       ///< the label that tells hosts apart
    DurationUs step_us = 15 * k_us_per_second; ///< dcgm: the sampling step of the gauges
    /// The longest the whole report may wait for the server (--prometheus-timeout).
    DurationUs timeout_us = k_prom_report_timeout_us;
};

/// The counter families of gua's /metrics that build_prometheus_report reads, and how.
const std::vector<CounterFamily>& gua_counter_families();

/// The gauge families of gua's /metrics that build_prometheus_report reads at its lookups.
const std::vector<GaugeFamily>& gua_gauge_families();

/// Builds the report of [options.from, options.to) from gua's counters with increase(), so
/// scrape gaps lose nothing. Throws Fatal when the server cannot be queried or options ask for
/// a filter the fleet source does not support (--gpu, --user, --interval).
ReportModel build_prometheus_report(PrometheusClient& prom, const FleetOptions& fleet,
                                    const BuildOptions& options, const TimeZone& tz);

/// Builds the report from dcgm-exporter's DCGM_FI_DEV_GPU_UTIL (%) and DCGM_FI_DEV_FB_USED (MiB),
/// sampled every fleet.step_us and classified by the audit with the configured thresholds.
/// Per-user attribution is not available (the report says so).
ReportModel build_dcgm_report(PrometheusClient& prom, const FleetOptions& fleet,
                              const BuildOptions& options, const TimeZone& tz);

/// The parts every fleet report shares: window, thresholds, version; rejects unsupported
/// filters with a one-line Fatal.
ReportModel start_fleet_model(const PrometheusClient& prom, const BuildOptions& options,
                              const TimeZone& tz);

/// Per-host presence of a series over the window (for coverage): the fleet's first and last
/// present time, gaps when no host reported, each host's covered share.
struct SeriesPresence {
    std::map<std::string, double> host_share;
    std::optional<TimeUs> first;
    std::optional<TimeUs> last_end;
    std::vector<std::pair<TimeUs, TimeUs>> gaps;
    double covered_share = 0; ///< mean of the hosts' shares
};

/// Samples `series` (one per host, labelled by `host_label`) from a query_range over the window.
SeriesPresence presence_of(const std::vector<PromSeries>& series, const std::string& host_label,
                           TimeUs from, TimeUs to, DurationUs step);

/// `value` rounded to a whole number within [0, max] (NaN: 0): numbers from a server are not
/// trusted to fit the integers gua keeps them in.
std::int64_t bounded_round(double value, double max);

/// The card index in a series' `gpu` label: a whole number of at most six digits, as the
/// driver numbers its cards. Throws Fatal naming `server` and the series for anything else
/// (missing, signed, not a number): garbage is never read as card 0.
int gpu_index(const PromLabels& labels, const std::string& server);

/// The query_range step for coverage: the window in about 1000 steps, at least 1 s.
DurationUs coverage_step(TimeUs from, TimeUs to);

/// Sorts identity rows by GPU-hours (then name), fills their shares and keeps the top `top`.
void rank_identities(ReportModel& m, std::vector<IdentityRow> rows, std::size_t top);

/// A card of a fleet report as §7 prices it.
struct FleetCard {
    audit::CardFacts facts; ///< uuid, model name and (when exported) memory size
    audit::StateTimes states;
};

/// §7 of a report from gua's counters: prices `cards` (the same cards, in the same order, as
/// m.gpus) and m.identities. Per-user counters carry no card, so an identity's active and
/// idle-held time is priced at the fleet's mean price of that state (exact when every card costs
/// the same; a note says so otherwise).
void price_fleet(ReportModel& m, const std::vector<FleetCard>& cards,
                 const audit::Pricing& pricing);

/// One fleet report's reading: the server, where and how to read it, and the report's options.
struct FleetRead {
    PrometheusClient& prom;
    const FleetOptions& fleet;
    const BuildOptions& options;
    const TimeZone& tz;
    PromLimits limits;
};

/// What §8 of a fleet report weighs besides the counters.
struct FleetEvidence {
    std::vector<FleetCard> cards; ///< the same cards, in the same order, as m.gpus
    std::array<std::array<audit::StateTimes, 24>, 7> heatmap{}; ///< in the report's zone
    DurationUs recorded_us = 0;                                 ///< wall time with data
};

/// §8 of a report from gua's counters: reads the recommender's per-card evidence (waste pools,
/// card profiles, per-user time per card) in `totals` (increase() over the window) for
/// `evidence.cards`, and runs audit::recommend as a database report does. Notes in
/// m.advice_notes what differs from the hosts' own reports (the zone of the pools, hosts left
/// out, users for groups). When no host exports the evidence (older daemons), leaves §8 empty
/// with the reason in m.advice_unavailable.
void advise_fleet(ReportModel& m, const CounterTotals& totals, const FleetRead& read,
                  const FleetEvidence& evidence);

/// The counter families of §9 (telemetry/exported_families.def), as gua_counter_families() lists
/// them.
std::vector<CounterFamily> health_counter_families();

/// §9 of a report from gua's counters: each card's health sums from the health families'
/// increase in `totals` (by host and uuid), built as a database report builds them; `cards` are
/// m.gpus's cards in order. Leaves m.health unset when no host exports them (older daemons).
void fill_fleet_health(ReportModel& m, const CounterTotals& totals, const std::string& host_label,
                       const std::vector<FleetCard>& cards, const BuildOptions& options);

/// Fills m.hosts from each host's state times, the GPU rows (which carry their host) and the
/// hosts' covered shares, and names the fleet in m.host.
void summarise_hosts(ReportModel& m, const std::map<std::string, audit::StateTimes>& states,
                     const SeriesPresence& presence, const std::string& url);

} // namespace gua::report
