// SPDX-License-Identifier: Apache-2.0
// The fleet report from gua's counters: increase() over the window, per host/GPU and per user.
#include "audit/waste.hpp"
#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "fleet/fleet.hpp"
#include "prometheus/answer.hpp"
#include "prometheus/counters.hpp"
#include "report/shares.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>

namespace gua::report {

namespace {

using F = telemetry::Family;

constexpr DurationUs k_quarter_us = 15 * k_us_per_minute;
constexpr double k_bytes_per_gib = 1024.0 * 1024.0 * 1024.0;

/// Counter seconds of one series as microseconds, at most 10^10 s (317 years of card time):
/// anything larger is a broken server, and the bound keeps sums over many series in range.
DurationUs us_of(double seconds) {
    return bounded_round(seconds * 1e6, 1e16);
}

void add_state(audit::StateTimes& t, const std::string& state, DurationUs us) {
    if (state == "active") {
        t.active += us;
    } else if (state == "idle_held") {
        t.idle_held += us;
    } else if (state == "truly_idle") {
        t.truly_idle += us;
    } else if (state == "unmeasured") {
        t.unmeasured += us;
    } else if (state == "allocated_unused") {
        t.allocated_unused += us;
    }
}

std::size_t bucket_index(const std::string& bucket) {
    if (bucket == "underutilized") {
        return 1;
    }
    if (bucket == "productive") {
        return 2;
    }
    return bucket == "compute_bound" ? 3 : 0;
}

/// A card of the fleet, keyed by (host, uuid).
struct Card {
    GpuRow row;
    audit::StateTimes states;
    std::array<DurationUs, 4> buckets{};
    double ticks = 0;
    std::optional<std::int64_t> memory_total_mib;
};

const std::vector<PromSample>& increase_of(const CounterTotals& totals, const std::string& name) {
    static const std::vector<PromSample> none;
    const auto it = totals.increase.find(name);
    return it != totals.increase.end() ? it->second : none;
}

/// Fleet reports: allocated-unused by the allocation's user, from the daemons' owner counters.
/// The counters carry no card, so each owner's cost is its share of the fleet's allocated-unused
/// cost (§7 prices that per card).
void fill_allocation_owners(ReportModel& m, const CounterTotals& totals) {
    if (!m.allocation) {
        return;
    }
    std::map<std::string, double> seconds_of;
    for (const PromSample& s :
         increase_of(totals, family(F::allocated_unused_user_seconds_total))) {
        seconds_of[prom_label(s.labels, "user")] += std::max(s.value, 0.0);
    }
    const double all_hours = m.allocation->allocated_unused_hours;
    const auto cents = static_cast<double>(m.cost.total.allocated_unused_cents);
    for (const auto& [user, seconds] : seconds_of) {
        AllocationOwnerRow row;
        row.name = user;
        row.kind = "user";
        row.allocated_unused_hours = seconds / 3600.0;
        row.allocated_unused_cents =
            all_hours > 0
                ? std::llround(cents * std::min(row.allocated_unused_hours / all_hours, 1.0))
                : 0;
        m.allocation->owners.push_back(row);
    }
    std::sort(m.allocation->owners.begin(), m.allocation->owners.end(),
              [](const AllocationOwnerRow& a, const AllocationOwnerRow& b) {
                  return a.allocated_unused_hours != b.allocated_unused_hours
                             ? a.allocated_unused_hours > b.allocated_unused_hours
                             : a.name < b.name;
              });
}

/// True when every UTC hour of [from, to) is one local hour of `tz` (zones whose offset is a
/// whole number of hours throughout): the heatmap's cells can then be read hour by hour.
bool whole_hours(const TimeZone& tz, TimeUs from, TimeUs to) {
    for (TimeUs h = from / k_us_per_hour * k_us_per_hour; h < to; h += k_us_per_hour) {
        if (tz.weekday_hour(h) != tz.weekday_hour(h + k_us_per_hour - 1) ||
            tz.weekday_hour(h) == tz.weekday_hour(h - 1)) {
            return false;
        }
    }
    return true;
}

using HeatCells = std::array<std::array<audit::StateTimes, 24>, 7>;

/// The hosts read at each step's latest sample (`steady`: a daemon's counters carry over a gap or
/// a restart), and those read at the last sample of each step (`last`: hosts whose counters went
/// down or that are gone at the end), however early in it, so that a daemon that stopped inside a
/// step (for good, or to come back on a new database) is seen up to its stop.
struct StepHosts {
    std::vector<std::string> steady;
    std::vector<std::string> last;
};

StepHosts step_hosts(const CounterTotals& totals) {
    StepHosts out;
    std::set_union(totals.went_down.begin(), totals.went_down.end(), totals.gone_at_end.begin(),
                   totals.gone_at_end.end(), std::back_inserter(out.last));
    std::set_difference(totals.hosts.begin(), totals.hosts.end(), out.last.begin(), out.last.end(),
                        std::back_inserter(out.steady));
    return out;
}

/// The cells into §5. The steps are read apart from the window's totals: they too may not hold
/// more card time than the cards could record (Fatal when they do).
void place_heatmap(ReportModel& m, const HeatCells& cells, const FleetRead& r,
                   const CounterTotals& totals) {
    const BuildOptions& o = r.options;
    DurationUs counted = 0;
    for (std::size_t d = 0; d < 7; ++d) {
        for (std::size_t h = 0; h < 24; ++h) {
            m.heatmap[d][h] = heat_cell(cells[d][h]);
            counted += cells[d][h].total();
        }
    }
    const double allowed =
        static_cast<double>(m.gpus.size()) *
        static_cast<double>(o.to - o.from + counter_tolerance_us(totals.sample_interval_us));
    if (static_cast<double>(counted) > allowed) {
        throw Fatal(fmt::format("refused the answers of Prometheus at {}: the hourly increases of "
                                "gua_gpu_seconds_total sum to {} of card time, more than the "
                                "fleet's {} card{} hold in a window of {}",
                                r.prom.url(), format_duration(counted), m.gpus.size(),
                                m.gpus.size() == 1 ? "" : "s", format_duration(o.to - o.from)));
    }
}

/// §5 from the increase per hour (per quarter hour in zones offset by a fraction of an hour),
/// and the two partial edges, read per host at each step (prometheus/counters.hpp). Returns the
/// cells' state times (§8 reads them).
HeatCells fill_heatmap(ReportModel& m, const FleetRead& r, const CounterTotals& totals) {
    PrometheusClient& prom = r.prom;
    const BuildOptions& o = r.options;
    const TimeZone& tz = r.tz;
    HeatCells cells{};
    const DurationUs step = whole_hours(tz, o.from, o.to) ? k_us_per_hour : k_quarter_us;
    const auto found = totals.series_per_host.find(family(F::gpu_seconds_total));
    const std::int64_t series = found != totals.series_per_host.end() ? found->second : 1;
    const StepHosts split = step_hosts(totals);
    const std::string by = "sum by (" + r.fleet.host_label + ", state) ";
    const std::string range = prom_range(step);
    // A host's sum of one state over one step is at most a step per card (its series).
    const double most =
        static_cast<double>(series) *
        static_cast<double>(step + counter_tolerance_us(totals.sample_interval_us)) / 1e6;
    const auto add = [&](TimeUs segment_start, const PromLabels& labels, double v) {
        if (!(v <= most)) {
            throw Fatal(fmt::format("refused the answers of Prometheus at {}: series {}: an "
                                    "increase of {:.6g} s in the step from {}, more than its {} "
                                    "series could count (at most {:.6g} s)",
                                    prom.url(), describe_series(labels), v,
                                    format_iso8601(segment_start), series, most));
        }
        const auto [day, hour] = tz.weekday_hour(segment_start);
        add_state(cells[static_cast<std::size_t>(day)][static_cast<std::size_t>(hour)],
                  prom_label(labels, "state"), us_of(v));
    };
    const auto hosts = [&](std::vector<std::string> names) {
        return HostSet{r.fleet.host_label, std::move(names), series, totals.sample_interval_us,
                       r.limits};
    };
    read_step_increases(prom, hosts(split.steady),
                        StepQuery{by + "(" + family(F::gpu_seconds_total) + "{{HOSTS}})", "",
                                  o.from, o.to, step, static_cast<double>(series)},
                        add);
    // The highest value of a step tells what a daemon that started over inside it counted
    // before.
    read_step_increases(
        prom, hosts(split.last),
        StepQuery{
            by + "(last_over_time(" + family(F::gpu_seconds_total) + "{{HOSTS}}" + range + "))",
            by + "(max_over_time(" + family(F::gpu_seconds_total) + "{{HOSTS}}" + range + "))",
            o.from, o.to, step, static_cast<double>(series)},
        add);
    place_heatmap(m, cells, r, totals);
    return cells;
}

void fill_identities(ReportModel& m, const CounterTotals& totals, const BuildOptions& o) {
    // Grouped by the `user` label, or by `namespace` (empty: outside a named pod); each host's
    // series add up.
    const bool by_namespace = o.grouping.by == audit::GroupBy::pod_namespace;
    const std::string label = by_namespace ? "namespace" : "user";
    std::map<std::string, IdentityRow> users;
    const auto row = [&](const PromSample& s) -> IdentityRow& {
        std::string name = prom_label(s.labels, label);
        if (by_namespace && name.empty()) {
            name = audit::k_no_namespace;
        }
        IdentityRow& r = users[name];
        r.name = name;
        return r;
    };
    for (const PromSample& s : increase_of(totals, family(F::identity_gpu_seconds_total))) {
        const double hours = to_hours(us_of(s.value));
        (prom_label(s.labels, "state") == "active" ? row(s).active_hours
                                                   : row(s).idle_held_hours) += hours;
    }
    for (const PromSample& s :
         increase_of(totals, family(F::identity_idle_held_bytes_seconds_total))) {
        row(s).idle_held_gib_hours += std::max(s.value, 0.0) / k_bytes_per_gib / 3600.0;
    }
    for (const PromSample& s : increase_of(totals, family(F::identity_card_ticks_total))) {
        row(s).samples += static_cast<std::uint64_t>(bounded_round(s.value, 1e15));
    }
    std::vector<IdentityRow> rows;
    for (auto& [name, r] : users) {
        // As the database report: users that never held a card and got no time (graphics-only
        // contexts such as Xorg) are left out.
        if (r.active_hours + r.idle_held_hours > 0 || r.idle_held_gib_hours > 0) {
            rows.push_back(r);
        }
    }
    rank_identities(m, std::move(rows), o.top_identities);
}

/// Refuses the answers when a card counted more time than the window holds (with the tolerance
/// of counter_tolerance_us): its series are impossible, not a figure to report.
void check_card_times(const std::map<std::pair<std::string, std::string>, Card>& cards,
                      const std::string& server, const BuildOptions& o, DurationUs interval) {
    const DurationUs allowed = o.to - o.from + counter_tolerance_us(interval);
    for (const auto& [key, c] : cards) {
        if (c.states.total() > allowed) {
            const PromLabels labels{{"__name__", family(F::gpu_seconds_total)},
                                    {"gpu", std::to_string(c.row.index)},
                                    {"uuid", c.row.uuid}};
            throw Fatal(fmt::format("refused the answers of Prometheus at {}: series {} on host "
                                    "{}: {} of card time in a window of {} (at most the window "
                                    "and a tolerance of {})",
                                    server, describe_series(labels), printable(key.first, 80),
                                    format_duration(c.states.total()),
                                    format_duration(o.to - o.from),
                                    format_duration(counter_tolerance_us(interval))));
        }
    }
}

/// Refuses the answers when an identity held more card time than every card of the fleet could
/// give it over the window.
void check_identity_times(const ReportModel& m, const std::string& server, const BuildOptions& o,
                          DurationUs interval) {
    const double allowed_hours = static_cast<double>(m.gpus.size()) *
                                 to_hours(o.to - o.from + counter_tolerance_us(interval));
    for (const IdentityRow& r : m.identities) {
        if (!(r.gpu_hours <= allowed_hours)) {
            const PromLabels labels{{"__name__", family(F::identity_gpu_seconds_total)},
                                    {"user", r.name}};
            throw Fatal(fmt::format("refused the answers of Prometheus at {}: series {}: {:.4g} "
                                    "GPU-hours in a window of {}, more than the fleet's {} "
                                    "card{} could give (at most {:.4g})",
                                    server, describe_series(labels), r.gpu_hours,
                                    format_duration(o.to - o.from), m.gpus.size(),
                                    m.gpus.size() == 1 ? "" : "s", allowed_hours));
        }
    }
}

/// gua's counters and gauges of every host over the window; throws Fatal when no host has any.
CounterTotals read_gua_counters(const FleetRead& r) {
    const BuildOptions& o = r.options;
    const std::string& h = r.fleet.host_label;
    CounterTotals totals = read_counters(
        r.prom, CounterQuery{h, o.from, o.to, gua_counter_families(), gua_gauge_families(),
                             r.limits, family(F::daemon_start_time_seconds)});
    if (totals.hosts.empty()) {
        throw Fatal(fmt::format("no gua daemon's series at Prometheus {} between {} and {}: "
                                "looked for gua_gpu_seconds_total and gua's other families "
                                "(docs/metrics.md) by the host label `{}`",
                                r.prom.url(), format_iso8601(o.from), format_iso8601(o.to), h));
    }
    return totals;
}

using Cards = std::map<std::pair<std::string, std::string>, Card>;

/// The cards of the fleet, by (host, uuid), with their state times, ticks, buckets and memory.
Cards read_cards(const CounterTotals& totals, const std::string& h, const std::string& server) {
    Cards cards;
    const auto card = [&](const PromSample& s) -> Card& {
        Card& c = cards[{prom_label(s.labels, h), prom_label(s.labels, "uuid")}];
        c.row.host = prom_label(s.labels, h);
        c.row.uuid = prom_label(s.labels, "uuid");
        c.row.short_uuid = short_uuid(c.row.uuid);
        c.row.model = prom_label(s.labels, "model");
        c.row.index = gpu_index(s.labels, server);
        return c;
    };
    for (const PromSample& s : increase_of(totals, family(F::gpu_seconds_total))) {
        add_state(card(s).states, prom_label(s.labels, "state"), us_of(s.value));
    }
    for (const PromSample& s : increase_of(totals, family(F::gpu_card_ticks_total))) {
        card(s).ticks += std::max(s.value, 0.0);
    }
    for (const PromSample& s : increase_of(totals, family(F::efficiency_seconds_total))) {
        for (auto& [key, c] : cards) {
            if (key.first == prom_label(s.labels, h) &&
                std::to_string(c.row.index) == prom_label(s.labels, "gpu")) {
                c.buckets[bucket_index(prom_label(s.labels, "bucket"))] += us_of(s.value);
                break;
            }
        }
    }
    // Memory size per card, for pricing MIG instances without a profile in their name.
    if (const auto memory = totals.gauge.find(family(F::gpu_memory_total_bytes));
        memory != totals.gauge.end()) {
        for (const PromSample& s : memory->second) {
            const auto it = cards.find({prom_label(s.labels, h), prom_label(s.labels, "uuid")});
            if (it != cards.end() && s.value > 0) {
                it->second.memory_total_mib = bounded_round(s.value / (1024.0 * 1024.0), 1e12);
            }
        }
    }
    return cards;
}

/// The fleet's sums over its cards.
struct CardSums {
    audit::StateTimes total;
    std::array<DurationUs, 4> buckets{};
    std::vector<FleetCard> priced;
    std::map<std::string, audit::StateTimes> by_host;
    std::vector<audit::StateTimes> states;
};

/// m.gpus from the cards that recorded anything, and their sums.
CardSums add_gpu_rows(ReportModel& m, Cards& cards) {
    CardSums sums;
    for (auto& [key, c] : cards) {
        c.row.samples = static_cast<std::uint64_t>(bounded_round(c.ticks, 1e15));
        if (c.row.samples == 0 && c.states.total() == 0) {
            continue;
        }
        c.row.shares = shares_of(c.states);
        c.row.buckets = bucket_shares(c.buckets);
        // gua's counters carry no provenance: the measured time counts as source unknown.
        c.row.provenance = provenance_of(c.states, audit::Provenance{}, 0);
        sums.states.push_back(c.states);
        sums.priced.push_back(FleetCard{
            audit::CardFacts{c.row.uuid, c.row.model, c.memory_total_mib, "", "", std::nullopt},
            c.states});
        m.gpus.push_back(c.row);
        m.samples += c.row.samples;
        sums.total += c.states;
        sums.by_host[key.first] += c.states;
        for (std::size_t b = 0; b < 4; ++b) {
            sums.buckets[b] += c.buckets[b];
        }
    }
    return sums;
}

/// §1–§3 of the fleet from the cards' sums.
void fill_states(ReportModel& m, const CardSums& sums) {
    const audit::StateTimes& total = sums.total;
    m.headline = shares_of(total);
    m.provenance = provenance_of(total, audit::Provenance{}, 0);
    m.observed_card_hours =
        to_hours(total.active + total.idle_held + total.truly_idle + total.allocated_unused);
    m.waste = audit::compute_waste(sums.states, 0);
    if (total.allocated_unused > 0) {
        // The counters carry the state, not the matrix nor the owners' shares by card.
        AllocationSection a;
        a.matrix_known = false;
        a.allocated_unused_hours = to_hours(total.allocated_unused);
        a.truly_idle_hours = to_hours(total.truly_idle);
        m.allocation = a;
    }
    m.notes.push_back("gua's Prometheus counters do not record how utilization was measured "
                      "(sample buffers or snapshots), nor why time is unmeasured: read the hosts' "
                      "databases with `gua report` for that");
    m.buckets = bucket_shares(sums.buckets);
    m.bucket_hours =
        to_hours(sums.buckets[0] + sums.buckets[1] + sums.buckets[2] + sums.buckets[3]);
}

/// Coverage and hosts from the daemons' tick counters; returns the wall time with data from
/// some host, as a database report's coverage counts it.
DurationUs fill_coverage(ReportModel& m, const FleetRead& r, const CounterTotals& totals,
                         const std::map<std::string, audit::StateTimes>& by_host) {
    const BuildOptions& o = r.options;
    const std::string& h = r.fleet.host_label;
    const DurationUs step = coverage_step(o.from, o.to);
    const SeriesPresence presence = presence_of(
        read_range(r.prom, HostSet{h, totals.hosts, 1, totals.sample_interval_us, r.limits},
                   "count by (" + h + ") (" + family(F::daemon_ticks_total) + "{{HOSTS}})", o.from,
                   o.to, step),
        h, o.from, o.to, step);
    m.coverage.first = presence.first;
    m.coverage.last_end = presence.last_end;
    m.coverage.gaps = presence.gaps;
    m.coverage.covered_share = presence.covered_share;
    summarise_hosts(m, by_host, presence, r.prom.url());
    DurationUs recorded = 0;
    if (presence.first && presence.last_end) {
        recorded = std::min(*presence.last_end, o.to) - std::max(*presence.first, o.from);
        for (const auto& [gap_from, gap_to] : presence.gaps) {
            recorded -=
                std::max<DurationUs>(std::min(gap_to, o.to) - std::max(gap_from, o.from), 0);
        }
    }
    return std::max<DurationUs>(recorded, 0);
}

} // namespace

const std::vector<CounterFamily>& gua_counter_families() {
    static const std::vector<CounterFamily> families{
        {family(F::gpu_seconds_total), {"gpu", "uuid", "model", "state"}, 1.0, false},
        // A tick is at least 100 ms ([daemon] interval).
        {family(F::gpu_card_ticks_total), {"gpu", "uuid", "model"}, 10.0, false},
        {family(F::efficiency_seconds_total), {"gpu", "bucket"}, 1.0, false},
        {family(F::identity_gpu_seconds_total), {"user", "namespace", "state"}, 0, true},
        {family(F::identity_idle_held_bytes_seconds_total), {"user", "namespace"}, 0, true},
        {family(F::identity_card_ticks_total), {"user", "namespace"}, 0, true},
        // The recommender's evidence (§8, fleet/advice.cpp).
        {family(F::waste_pool_seconds_total), {"uuid", "pool"}, 1.0, false},
        {family(F::gpu_measured_seconds_total), {"uuid", "period"}, 1.0, false},
        {family(F::gpu_pattern_seconds_total), {"uuid", "pattern"}, 1.0, false},
        {family(F::gpu_pattern_busy_seconds_total), {"uuid", "pattern"}, 1.0, false},
        {family(F::gpu_bursty_efficiency_seconds_total), {"uuid", "bucket"}, 1.0, false},
        {family(F::gpu_held_bytes_seconds_total), {"uuid", "during"}, 0, false},
        {family(F::gpu_user_seconds_total), {"uuid", "user", "state"}, 1.0, false},
        // Allocated-unused by the allocation's user (present only with an allocation source).
        {family(F::allocated_unused_user_seconds_total), {"user"}, 0, false},
    };
    static const std::vector<CounterFamily> with_health = [] {
        std::vector<CounterFamily> all = families;
        for (CounterFamily& f : health_counter_families()) {
            all.push_back(std::move(f));
        }
        return all;
    }();
    return with_health;
}

const std::vector<GaugeFamily>& gua_gauge_families() {
    static const std::vector<GaugeFamily> families{
        {family(F::gpu_memory_total_bytes), {"uuid"}},
        {family(F::waste_pools_info), {"time_zone"}},
    };
    return families;
}

ReportModel build_prometheus_report(PrometheusClient& prom, const FleetOptions& fleet,
                                    const BuildOptions& o, const TimeZone& tz) {
    ReportModel m = start_fleet_model(prom, o, tz);
    const FleetRead r{prom, fleet, o, tz, PromLimits{}};
    const std::string& h = fleet.host_label;
    const CounterTotals totals = read_gua_counters(r);
    Cards cards = read_cards(totals, h, prom.url());
    check_card_times(cards, prom.url(), o, totals.sample_interval_us);
    CardSums sums = add_gpu_rows(m, cards);
    if (m.gpus.empty()) {
        throw Fatal(fmt::format("no card's series at Prometheus {} between {} and {}: looked for "
                                "gua_gpu_seconds_total and gua_gpu_card_ticks_total of the {} "
                                "host{} with gua's series (by `{}`)",
                                prom.url(), format_iso8601(o.from), format_iso8601(o.to),
                                totals.hosts.size(), totals.hosts.size() == 1 ? "" : "s", h));
    }
    fill_states(m, sums);
    fill_identities(m, totals, o);
    check_identity_times(m, prom.url(), o, totals.sample_interval_us);
    FleetEvidence evidence;
    evidence.heatmap = fill_heatmap(m, r, totals);
    price_fleet(m, sums.priced, o.pricing);
    fill_allocation_owners(m, totals);
    evidence.recorded_us = fill_coverage(m, r, totals, sums.by_host);
    fill_fleet_health(m, totals, h, sums.priced, o);
    evidence.cards = std::move(sums.priced);
    advise_fleet(m, totals, r, evidence);
    return m;
}

} // namespace gua::report
