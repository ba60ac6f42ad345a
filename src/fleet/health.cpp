// SPDX-License-Identifier: Apache-2.0
// §9 Health of a report from gua's counters: each card's health sums (audit::HealthTotals, as
// the daemon's exporter keeps them: export/metrics_health.cpp) from the increase of the health
// families over the window, then built as a database report builds them.
#include "fleet/fleet.hpp"
#include "report/build_health.hpp"
#include "report/health_remedies.hpp"

#include <cstring>

namespace gua::report {

namespace {

using F = telemetry::Family;

/// `value` × `scale` as a whole number, at most 10^18: a broken server is not trusted to fit.
std::int64_t scaled(double value, double scale) {
    return bounded_round(value * scale, 1e18);
}

/// The index of `name` in `names`, or names.size().
template <std::size_t N>
std::size_t index_of(const std::array<const char*, N>& names, const std::string& name) {
    for (std::size_t i = 0; i < N; ++i) {
        if (name == names[i]) {
            return i;
        }
    }
    return N;
}

void add_figure(audit::HealthTotals& t, const std::string& figure, DurationUs us) {
    DurationUs* const field = figure == "energy_counter"    ? &t.energy.counter_us
                              : figure == "energy_power"    ? &t.energy.power_us
                              : figure == "clock_events"    ? &t.throttle.events_active_us
                              : figure == "sm_clock"        ? &t.throttle.clock_active_us
                              : figure == "memory"          ? &t.memory.known_us
                              : figure == "memory_pressure" ? &t.memory.pressure_us
                              : figure == "ghost"           ? &t.memory.ghost_known_us
                              : figure == "gpm_light"       ? &t.gpm.light_active_us
                                                            : nullptr;
    if (field != nullptr) {
        *field += us;
    }
}

/// Adds one series' increase to the card's totals.
void add_sample(audit::HealthTotals& t, F family, const PromLabels& labels, double v) {
    const auto label = [&](const char* name) { return prom_label(labels, name); };
    if (family == F::gpu_health_seconds_total) {
        add_figure(t, label("figure"), scaled(v, 1e6));
    } else if (family == F::gpu_state_energy_joules_total) {
        const std::size_t s = index_of(audit::k_energy_state_names, label("state"));
        if (s < t.energy.state_mj.size()) {
            // The source split is in the figures' time; the sum is what §9 prices.
            t.energy.state_mj[s] += scaled(v, 1e3);
            t.energy.counter_mj += scaled(v, 1e3);
        }
    } else if (family == F::gpu_throttle_seconds_total) {
        const std::size_t r = index_of(audit::k_throttle_reason_names, label("reason"));
        if (r < audit::k_throttle_reason_count) {
            t.throttle.reason_active_us[r] += scaled(v, 1e6);
        }
    } else if (family == F::gpu_sm_clock_hertz_seconds_total) {
        (label("clock") == "highest" ? t.throttle.max_clock_mhz_ms : t.throttle.clock_mhz_ms) +=
            scaled(v, 1e-3);
    } else if (family == F::gpu_ghost_bytes_seconds_total) {
        t.memory.ghost_mib_ms += scaled(v, 1.0 / 1048.576);
    } else if (family == F::gpu_load_seconds_total) {
        const std::int64_t bin = scaled(std::atof(label("bin").c_str()), 0.2);
        if (bin >= 0 && bin < static_cast<std::int64_t>(audit::k_load_bins)) {
            t.load[static_cast<std::size_t>(bin)] += scaled(v, 1e6);
        }
    } else {
        const std::size_t k = index_of(audit::k_gpm_metric_names, label("metric"));
        if (k < audit::k_gpm_metric_count) {
            (family == F::gpu_gpm_seconds_total ? t.gpm.active_us[k] : t.gpm.cpct_ms[k]) +=
                family == F::gpu_gpm_seconds_total ? scaled(v, 1e6) : scaled(v, 1e7);
        }
    }
}

constexpr std::array<F, 8> k_health_families{
    F::gpu_health_seconds_total,      F::gpu_state_energy_joules_total,
    F::gpu_throttle_seconds_total,    F::gpu_sm_clock_hertz_seconds_total,
    F::gpu_ghost_bytes_seconds_total, F::gpu_load_seconds_total,
    F::gpu_gpm_seconds_total,         F::gpu_gpm_ratio_seconds_total};

} // namespace

std::vector<CounterFamily> health_counter_families() {
    std::vector<CounterFamily> out;
    for (const F f : k_health_families) {
        std::vector<std::string> labels = telemetry::family_labels(f);
        labels.erase(std::remove(labels.begin(), labels.end(), "gpu"), labels.end());
        const bool seconds = f == F::gpu_health_seconds_total ||
                             f == F::gpu_throttle_seconds_total || f == F::gpu_load_seconds_total ||
                             f == F::gpu_gpm_seconds_total;
        out.push_back(CounterFamily{family(f), labels, seconds ? 1.0 : 0.0, false});
    }
    return out;
}

void fill_fleet_health(ReportModel& m, const CounterTotals& totals, const std::string& host_label,
                       const std::vector<FleetCard>& cards, const BuildOptions& options) {
    std::map<std::pair<std::string, std::string>, audit::HealthTotals> by_card;
    for (const F f : k_health_families) {
        const auto it = totals.increase.find(family(f));
        for (const PromSample& s :
             it == totals.increase.end() ? std::vector<PromSample>{} : it->second) {
            add_sample(by_card[{prom_label(s.labels, host_label), prom_label(s.labels, "uuid")}], f,
                       s.labels, std::max(s.value, 0.0));
        }
    }
    if (by_card.empty()) {
        return; // daemons older than the health counters: §9 stays n/a
    }
    std::vector<CardHealthInput> inputs;
    std::vector<store::GpuRow> rows; // for the remedies' memory sizes
    for (std::size_t i = 0; i < m.gpus.size() && i < cards.size(); ++i) {
        const GpuRow& g = m.gpus[i];
        CardHealthInput c{g.index, g.uuid, g.model, g.host, cards[i].states, {}, std::nullopt};
        if (const auto it = by_card.find({g.host, g.uuid}); it != by_card.end()) {
            c.health = it->second;
        }
        if (i < m.cost.gpus.size() && m.cost.gpus[i].index == g.index) {
            c.micros_per_gpu_hour = m.cost.gpus[i].micros_per_gpu_hour;
        }
        inputs.push_back(std::move(c));
        store::GpuRow row;
        row.index = g.index;
        row.uuid = g.uuid;
        row.name = g.model;
        row.memory_total_mib = cards[i].facts.memory_total_mib;
        rows.push_back(std::move(row));
    }
    HealthSection h = build_card_health(inputs, options);
    h.remedies = health_remedies(h, m.cost.gpus, rows);
    m.health = std::move(h);
    m.notes.push_back("§9 from gua's counters: energy and light time per identity, ghost memory's "
                      "first and last time and imbalance across cards need the hosts' databases "
                      "(gua report on each host)");
}

} // namespace gua::report
