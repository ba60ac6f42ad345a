// SPDX-License-Identifier: Apache-2.0
// §8 of the fleet report from gua's counters: the recommender's evidence (waste pools, card
// profiles, per-user time per card) read back with increase() and fed to the same
// audit::recommend a database report runs.
#include "audit/recommend.hpp"
#include "fleet/fleet.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

namespace gua::report {

namespace {

constexpr double k_bytes_per_mib = 1024.0 * 1024.0;

/// Counter seconds as fractional microseconds, within [0, 10^16] (NaN: 0), as us_of bounds them.
double micros(double seconds) {
    return seconds > 0 ? std::min(seconds * 1e6, 1e16) : 0.0;
}

using F = telemetry::Family;

/// The per-card counters of one evidence family, summed by host, uuid and `label`.
struct EvidenceFamily {
    F id;
    const char* label;
};

/// The cards of the report, by (host, uuid), that §8 covers: index into the input's cards.
using CardIndex = std::map<std::pair<std::string, std::string>, std::size_t>;

/// Adds one evidence series of a card to its CardEvidence.
void add_series(audit::CardEvidence& card, DurationUs& steady_other, const EvidenceFamily& f,
                const std::string& value, double seconds) {
    const double us = micros(seconds);
    const auto whole = static_cast<DurationUs>(us);
    audit::CardProfile& p = card.profile;
    if (f.id == F::waste_pool_seconds_total) {
        for (std::size_t i = 0; i < audit::k_pool_count; ++i) {
            if (value == audit::to_string(static_cast<audit::Pool>(i))) {
                card.pools[i] += us;
            }
        }
    } else if (f.id == F::gpu_measured_seconds_total) {
        (value == "office" ? p.office_us : p.off_hours_us) += whole;
    } else if (f.id == F::gpu_pattern_seconds_total) {
        if (value == "bursty") {
            p.bursty_us += whole;
        } else if (value == "steady_under") {
            p.steady_under_us += whole;
        } else if (value == "steady_compute_bound") {
            p.steady_compute_bound_us += whole;
        } else {
            steady_other += whole;
        }
    } else if (f.id == F::gpu_pattern_busy_seconds_total) {
        // Busy seconds back to Σ utilization % × µs.
        (value == "bursty"         ? p.bursty_util_us
         : value == "steady_under" ? p.steady_under_util_us
                                   : p.steady_compute_bound_util_us) += us * 100.0;
    } else if (f.id == F::gpu_bursty_efficiency_seconds_total) {
        const std::size_t b = value == "underutilized"   ? 1
                              : value == "productive"    ? 2
                              : value == "compute_bound" ? 3
                                                         : 0;
        p.bursty_bucket_us[b] += whole;
    } else if (f.id == F::gpu_held_bytes_seconds_total) {
        // Byte-seconds back to MiB·µs, at most 2^40 MiB held for 10^10 s.
        const double mib_us = seconds > 0 ? std::min(seconds / k_bytes_per_mib * 1e6, 1.1e28) : 0.0;
        if (value == "idle_held") {
            p.idle_held_mib_us += mib_us;
        } else {
            p.active_held_mib_us += mib_us;
            if (value == "steady_under") {
                p.steady_under_held_mib_us += mib_us;
            }
        }
    }
}

std::string zone_list(const std::map<std::string, std::set<std::string>>& zones) {
    std::set<std::string> all;
    for (const auto& [host, z] : zones) {
        all.insert(z.begin(), z.end());
    }
    if (all.size() == 1) {
        return *all.begin();
    }
    std::vector<std::string> parts;
    for (const auto& [host, z] : zones) {
        parts.push_back(fmt::format("{} {}", host, fmt::join(z, " then ")));
    }
    return fmt::format("{}", fmt::join(parts, ", "));
}

const std::vector<PromSample>&
series_of(const std::map<std::string, std::vector<PromSample>>& by_name, const std::string& name) {
    static const std::vector<PromSample> none;
    const auto it = by_name.find(name);
    return it != by_name.end() ? it->second : none;
}

/// Per host that exports the evidence, the zones its office hours were judged in (the gauge as
/// the window's edges saw it).
std::map<std::string, std::set<std::string>> evidence_zones(const CounterTotals& totals,
                                                            const std::string& h) {
    std::map<std::string, std::set<std::string>> zones;
    for (const PromSample& s : series_of(totals.gauge, family(F::waste_pools_info))) {
        zones[prom_label(s.labels, h)].insert(prom_label(s.labels, "time_zone"));
    }
    return zones;
}

/// The recommender's cards: those of m.gpus on hosts that export the evidence, priced, by
/// (host, uuid) in `index`.
void add_cards(audit::RecommendInput& input, CardIndex& index, const ReportModel& m,
               const FleetEvidence& evidence, const audit::Pricing& pricing,
               const std::map<std::string, std::set<std::string>>& zones) {
    const std::vector<FleetCard>& cards = evidence.cards;
    for (std::size_t i = 0; i < cards.size() && i < m.gpus.size(); ++i) {
        const GpuRow& g = m.gpus[i];
        if (!zones.contains(g.host)) {
            continue;
        }
        index[{g.host, g.uuid}] = input.cards.size();
        input.cards.push_back(
            audit::CardEvidence{g.index, g.model, cards[i].facts.memory_total_mib,
                                audit::card_price(pricing, cards[i].facts).micros_per_gpu_hour,
                                cards[i].states, audit::PoolTimes{}, audit::CardProfile{}});
    }
}

/// The pools and profiles of the indexed cards from the per-card evidence families.
void add_card_series(audit::RecommendInput& input, const CardIndex& index,
                     const CounterTotals& totals, const std::string& h) {
    std::vector<DurationUs> steady_other(input.cards.size());
    for (const EvidenceFamily& f :
         {EvidenceFamily{F::waste_pool_seconds_total, "pool"},
          EvidenceFamily{F::gpu_measured_seconds_total, "period"},
          EvidenceFamily{F::gpu_pattern_seconds_total, "pattern"},
          EvidenceFamily{F::gpu_pattern_busy_seconds_total, "pattern"},
          EvidenceFamily{F::gpu_bursty_efficiency_seconds_total, "bucket"},
          EvidenceFamily{F::gpu_held_bytes_seconds_total, "during"}}) {
        for (const PromSample& s : series_of(totals.increase, family(f.id))) {
            const auto it = index.find({prom_label(s.labels, h), prom_label(s.labels, "uuid")});
            if (it != index.end()) {
                add_series(input.cards[it->second], steady_other[it->second], f,
                           prom_label(s.labels, f.label), s.value);
            }
        }
    }
    for (std::size_t i = 0; i < input.cards.size(); ++i) {
        audit::CardProfile& p = input.cards[i].profile;
        p.steady_us = p.steady_under_us + p.steady_compute_bound_us + steady_other[i];
    }
}

/// Per-user time per card, for naming who holds the cards a rule concerns. True when the
/// daemons summed users beyond their label limit as `other`.
bool add_users(audit::RecommendInput& input, const CardIndex& index, const CounterTotals& totals,
               const std::string& h) {
    std::map<std::string, audit::IdentityEvidence> users;
    for (const PromSample& s : series_of(totals.increase, family(F::gpu_user_seconds_total))) {
        const auto it = index.find({prom_label(s.labels, h), prom_label(s.labels, "uuid")});
        const std::string user = prom_label(s.labels, "user");
        if (it == index.end() || user == "(no process)") {
            continue;
        }
        audit::IdentityEvidence& ev = users[user];
        ev.name = user;
        ev.active_us.resize(input.cards.size());
        ev.idle_held_us.resize(input.cards.size());
        (prom_label(s.labels, "state") == "active" ? ev.active_us : ev.idle_held_us)[it->second] +=
            micros(s.value);
    }
    const bool other = users.contains("other");
    for (auto& [name, ev] : users) {
        input.identities.push_back(std::move(ev));
    }
    return other;
}

/// What §8 of the fleet report says it differs in from the hosts' own reports.
void add_advice_notes(ReportModel& m, const std::string& pools_zone,
                      const std::vector<std::string>& without, std::size_t hosts,
                      const BuildOptions& o, bool other) {
    std::string zone_note = fmt::format(
        "the daemons split the waste pools into office hours and off hours (Monday–Friday "
        "{:02}:00–{:02}:00) in {}",
        audit::k_office_first_hour, audit::k_office_end_hour, pools_zone);
    if (pools_zone != m.time_zone) {
        zone_note += fmt::format(
            " (their [report] time_zone), not in this report's {}: the heatmap hours named here "
            "are in {}, so a time-of-day finding mixes the two zones",
            m.time_zone, m.time_zone);
    }
    m.advice_notes.push_back(zone_note);
    if (!without.empty()) {
        m.advice_notes.push_back(fmt::format(
            "§8 leaves out {} of {} hosts, whose daemons do not export the recommender's "
            "evidence (older gua): {}; their cards are in §1–§7 but not in the waste baseline "
            "or the savings",
            without.size(), hosts, fmt::join(without, ", ")));
    }
    if (o.grouping.by != audit::GroupBy::user) {
        m.advice_notes.push_back(
            "the identities named here are users, not the [report] group_by groups: the "
            "per-card counters carry only the user label");
    }
    if (other) {
        m.advice_notes.push_back(
            "`other` sums, per card, the users beyond each daemon's first 20 user labels: who "
            "among them held a card only each host's `gua report` can say");
    }
}

} // namespace

void advise_fleet(ReportModel& m, const CounterTotals& totals, const FleetRead& read,
                  const FleetEvidence& evidence) {
    const std::string& h = read.fleet.host_label;
    const BuildOptions& o = read.options;
    const std::map<std::string, std::set<std::string>> zones = evidence_zones(totals, h);
    std::set<std::string> hosts;
    for (const GpuRow& g : m.gpus) {
        hosts.insert(g.host);
    }
    std::vector<std::string> without;
    for (const std::string& host : hosts) {
        if (!zones.contains(host)) {
            without.push_back(host);
        }
    }
    if (zones.empty() || (!hosts.empty() && without.size() == hosts.size())) {
        m.advice_unavailable =
            "not computed from Prometheus: the gua daemons behind it do not export the "
            "recommender's evidence (gua_waste_pool_seconds_total and the per-card families "
            "beside it; older gua versions); upgrade them, or run `gua report` on each host for "
            "its recommendations";
        return;
    }

    audit::RecommendInput input;
    input.time_zone = m.time_zone;
    input.recorded_us = evidence.recorded_us;
    input.spot_discount = o.pricing.spot_discount;
    input.heatmap = evidence.heatmap;
    CardIndex index;
    add_cards(input, index, m, evidence, o.pricing, zones);
    add_card_series(input, index, totals, h);
    const bool other = add_users(input, index, totals, h);

    m.advice = audit::recommend(input);
    m.advice_unavailable.clear();
    m.pools_time_zone = zone_list(zones);
    add_advice_notes(m, m.pools_time_zone, without, hosts.size(), o, other);
}

} // namespace gua::report
