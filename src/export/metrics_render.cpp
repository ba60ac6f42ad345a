// SPDX-License-Identifier: Apache-2.0
// Metrics::render: every family with HELP, TYPE and base units (the list is docs/metrics.md).
#include "core/version.hpp"
#include "export/exposition.hpp"
#include "export/metrics.hpp"
#include "export/metrics_health.hpp"
#include "telemetry/exported_families.hpp"

#include <array>

namespace gua::exporter {

using telemetry::Family;
using telemetry::family_name;

namespace {

constexpr double k_bytes_per_mib = 1024.0 * 1024.0;
constexpr double k_us_per_s = 1e6;
constexpr std::array<const char*, audit::k_bucket_count> k_bucket_names{
    "idle", "underutilized", "productive", "compute_bound"};

double seconds(double us) {
    return us / k_us_per_s;
}

double seconds(DurationUs us) {
    return static_cast<double>(us) / k_us_per_s;
}

/// `card`'s labels and, for a field sharing its family, the field's own label.
Labels field_labels(const Labels& card, const telemetry::CardFieldInfo& f) {
    Labels labels = card;
    if (const std::size_t eq = f.metric_label.find('='); eq != std::string_view::npos) {
        labels.emplace_back(f.metric_label.substr(0, eq), f.metric_label.substr(eq + 1));
    }
    return labels;
}

/// The recommender's per-card evidence: the pools and the card profile's sums.
void add_evidence(Exposition& e, const Labels& card, const audit::PoolTimes& pools,
                  const audit::CardProfile& p, double active_other_held_mib_us) {
    for (std::size_t i = 0; i < audit::k_pool_count; ++i) {
        // The allocated-unused pool appears once an allocation source reported one.
        if (static_cast<audit::Pool>(i) == audit::Pool::allocated_unused && pools[i] <= 0) {
            continue;
        }
        e.add(family_name(Family::waste_pool_seconds_total),
              with(card, "pool", audit::to_string(static_cast<audit::Pool>(i))), seconds(pools[i]));
    }
    e.add(family_name(Family::gpu_measured_seconds_total), with(card, "period", "office"),
          seconds(p.office_us));
    e.add(family_name(Family::gpu_measured_seconds_total), with(card, "period", "off_hours"),
          seconds(p.off_hours_us));
    const DurationUs steady_other = p.steady_us - p.steady_under_us - p.steady_compute_bound_us;
    e.add(family_name(Family::gpu_pattern_seconds_total), with(card, "pattern", "bursty"),
          seconds(p.bursty_us));
    e.add(family_name(Family::gpu_pattern_seconds_total), with(card, "pattern", "steady_under"),
          seconds(p.steady_under_us));
    e.add(family_name(Family::gpu_pattern_seconds_total),
          with(card, "pattern", "steady_compute_bound"), seconds(p.steady_compute_bound_us));
    e.add(family_name(Family::gpu_pattern_seconds_total), with(card, "pattern", "steady_other"),
          seconds(steady_other));
    // Σ utilization % × µs → seconds of SM activity.
    const auto busy = [](double pct_us) { return pct_us / 100.0 / k_us_per_s; };
    e.add(family_name(Family::gpu_pattern_busy_seconds_total), with(card, "pattern", "bursty"),
          busy(p.bursty_util_us));
    e.add(family_name(Family::gpu_pattern_busy_seconds_total),
          with(card, "pattern", "steady_under"), busy(p.steady_under_util_us));
    e.add(family_name(Family::gpu_pattern_busy_seconds_total),
          with(card, "pattern", "steady_compute_bound"), busy(p.steady_compute_bound_util_us));
    for (std::size_t b = 0; b < audit::k_bucket_count; ++b) {
        e.add(family_name(Family::gpu_bursty_efficiency_seconds_total),
              with(card, "bucket", k_bucket_names[b]), seconds(p.bursty_bucket_us[b]));
    }
    const auto bytes_seconds = [](double mib_us) { return mib_us * k_bytes_per_mib / k_us_per_s; };
    e.add(family_name(Family::gpu_held_bytes_seconds_total), with(card, "during", "idle_held"),
          bytes_seconds(p.idle_held_mib_us));
    e.add(family_name(Family::gpu_held_bytes_seconds_total), with(card, "during", "steady_under"),
          bytes_seconds(p.steady_under_held_mib_us));
    e.add(family_name(Family::gpu_held_bytes_seconds_total), with(card, "during", "active_other"),
          bytes_seconds(active_other_held_mib_us));
}

/// Every family, in the order of /metrics: the audit's, the per-card readings, the daemon's.
void declare(Exposition& e) {
    const auto declare = [&](telemetry::FamilyPlace place) {
        for (const telemetry::ExportedFamily& f : telemetry::k_exported_families) {
            if (f.place == place) {
                e.family(f.name,
                         f.kind == telemetry::MetricKind::counter ? MetricType::counter
                                                                  : MetricType::gauge,
                         f.help);
            }
        }
    };
    declare(telemetry::FamilyPlace::audit);
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        if (f.metric_kind != telemetry::MetricKind::none && !f.help.empty()) {
            e.family(f.metric,
                     f.metric_kind == telemetry::MetricKind::counter ? MetricType::counter
                                                                     : MetricType::gauge,
                     f.help);
        }
    }
    declare(telemetry::FamilyPlace::daemon);
}

} // namespace

void Metrics::render_cards(Exposition& e) const {
    for (const auto& [uuid, g] : m_gpus) {
        const std::string gpu = std::to_string(g.labels.index);
        const std::string_view model = g.labels.model;
        // uuid captured by name: clang 14 (the TSan build) cannot capture a structured binding.
        const auto state = [&, &uuid = uuid](const char* name, DurationUs us) {
            e.add(family_name(Family::gpu_seconds_total),
                  {{"gpu", gpu}, {"uuid", uuid}, {"model", model}, {"state", name}}, seconds(us));
        };
        state("active", g.states.active);
        state("idle_held", g.states.idle_held);
        state("truly_idle", g.states.truly_idle);
        if (g.states.unmeasured > 0) {
            state("unmeasured", g.states.unmeasured);
        }
        if (g.states.allocated_unused > 0) {
            state("allocated_unused", g.states.allocated_unused);
        }
        e.add(family_name(Family::gpu_card_ticks_total),
              {{"gpu", gpu}, {"uuid", uuid}, {"model", model}}, static_cast<double>(g.ticks));
        for (std::size_t b = 0; b < audit::k_bucket_count; ++b) {
            e.add(family_name(Family::efficiency_seconds_total),
                  {{"gpu", gpu}, {"bucket", k_bucket_names[b]}}, seconds(g.bucket_us[b]));
        }
        const Labels card{{"gpu", gpu}, {"uuid", uuid}};
        for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
            const std::optional<double>& total = g.field_totals[static_cast<std::size_t>(f.field)];
            if (f.metric_kind == telemetry::MetricKind::counter && total) {
                e.add(f.metric, field_labels(card, f), *total * f.metric_scale);
            }
        }
        add_evidence(e, card, g.pools, g.profile, g.active_other_held_mib_us);
        add_health_series(e, card, g.health);
        for (const auto& [user, times] : g.users) {
            e.add(family_name(Family::gpu_user_seconds_total),
                  {{"gpu", gpu}, {"uuid", uuid}, {"user", user}, {"state", "active"}},
                  seconds(times[0]));
            e.add(family_name(Family::gpu_user_seconds_total),
                  {{"gpu", gpu}, {"uuid", uuid}, {"user", user}, {"state", "idle_held"}},
                  seconds(times[1]));
        }
        render_waste_dollars(e, gpu, model, g.states);
    }
}

void Metrics::render_waste_dollars(Exposition& e, const std::string& gpu, std::string_view model,
                                   const audit::StateTimes& states) const {
    std::optional<double> price = m_options.price_per_gpu_hour;
    if (!price && m_options.pricing) {
        price = static_cast<double>(audit::price_micros(*m_options.pricing, model)) /
                static_cast<double>(audit::k_micros_per_unit);
    }
    if (!price) {
        return;
    }
    const double per_second = *price / 3600.0;
    e.add(family_name(Family::waste_dollars_total), {{"gpu", gpu}, {"state", "idle_held"}},
          seconds(states.idle_held) * per_second);
    e.add(family_name(Family::waste_dollars_total), {{"gpu", gpu}, {"state", "truly_idle"}},
          seconds(states.truly_idle) * per_second);
    if (states.allocated_unused > 0) {
        e.add(family_name(Family::waste_dollars_total),
              {{"gpu", gpu}, {"state", "allocated_unused"}},
              seconds(states.allocated_unused) * per_second);
    }
}

void Metrics::render_identities(Exposition& e) const {
    for (const auto& [key, u] : m_users) {
        // Every series of a family has the same label names; "" where a name is not known.
        const Labels who{{"user", key.user},
                         {"namespace", key.pod_namespace},
                         {"pod", key.pod},
                         {"container", key.container}};
        Labels with_state = who;
        with_state.emplace_back("state", "active");
        e.add(family_name(Family::identity_gpu_seconds_total), with_state, seconds(u.active_us));
        with_state.back().second = "idle_held";
        e.add(family_name(Family::identity_gpu_seconds_total), with_state, seconds(u.idle_held_us));
        e.add(family_name(Family::identity_idle_held_bytes_seconds_total), who,
              seconds(u.idle_held_mib_us) * k_bytes_per_mib);
        e.add(family_name(Family::identity_card_ticks_total), who, static_cast<double>(u.ticks));
    }
}

void Metrics::render_readings(Exposition& e) const {
    for (const auto& [uuid, r] : m_readings) {
        const std::string gpu = std::to_string(r.labels.index);
        const Labels card{{"gpu", gpu}, {"uuid", uuid}};
        e.add(family_name(Family::gpu_info),
              {{"gpu", gpu},
               {"uuid", uuid},
               {"model", r.labels.model},
               {"driver", m_options.driver_version}},
              1);
        if (r.util_pct) {
            e.add(family_name(Family::gpu_utilization_ratio), card, *r.util_pct / 100.0);
        }
        if (r.mem_total_mib) {
            e.add(family_name(Family::gpu_memory_total_bytes), card,
                  static_cast<double>(*r.mem_total_mib) * k_bytes_per_mib);
        }
        for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
            const std::optional<std::int64_t>& v = r.readings.*f.value;
            if (f.metric_kind == telemetry::MetricKind::gauge && v) {
                e.add(f.metric, field_labels(card, f), static_cast<double>(*v) * f.metric_scale);
            }
        }
    }
    render_xid_events(e);
}

void Metrics::render_xid_events(Exposition& e) const {
    for (const auto& [uuid, codes] : m_xid_events) {
        const auto gpu = m_gpus.find(uuid);
        const std::string index =
            gpu == m_gpus.end() ? std::string{} : std::to_string(gpu->second.labels.index);
        for (const auto& [code, count] : codes) {
            e.add(family_name(Family::gpu_xid_events_total),
                  {{"gpu", index}, {"uuid", uuid}, {"code", code}}, static_cast<double>(count));
        }
    }
}

void Metrics::render_daemon(Exposition& e) const {
    const Health& h = m_health;
    e.add(family_name(Family::daemon_ticks_total), {}, static_cast<double>(h.ticks));
    e.add(family_name(Family::daemon_tick_overruns_total), {}, static_cast<double>(h.overruns));
    e.add(family_name(Family::daemon_errors_total), {{"kind", "db_write"}},
          static_cast<double>(h.db_write_errors));
    e.add(family_name(Family::daemon_errors_total), {{"kind", "device_read"}},
          static_cast<double>(h.device_read_errors));
    e.add(family_name(Family::write_errors_total), {}, static_cast<double>(h.db_write_errors));
    if (h.last_tick_end) {
        e.add(family_name(Family::daemon_last_tick_timestamp_seconds), {},
              seconds(*h.last_tick_end));
    }
    e.add(family_name(Family::daemon_tick_interval_seconds), {}, seconds(m_options.interval_us));
    e.add(family_name(Family::daemon_start_time_seconds), {}, seconds(h.started));
    if (h.wal_bytes) {
        e.add(family_name(Family::db_wal_bytes), {}, static_cast<double>(*h.wal_bytes));
    }
    for (const DeliveryCounts& d : h.deliveries) {
        for (const auto& [outcome, n] :
             {std::pair{"delivered", d.delivered}, std::pair{"failed", d.failed},
              std::pair{"dropped", d.dropped}}) {
            e.add(family_name(Family::notify_deliveries_total),
                  {{"transport", d.transport}, {"outcome", outcome}}, static_cast<double>(n));
        }
        e.add(family_name(Family::notify_retries_total), {{"transport", d.transport}},
              static_cast<double>(d.retries));
    }
    e.add(family_name(Family::waste_pools_info), {{"time_zone", m_options.time_zone.name()}}, 1);
    e.add(family_name(Family::build_info), {{"version", k_version}}, 1);
}

std::string Metrics::render() const {
    Exposition e;
    declare(e);
    render_cards(e);
    render_identities(e);
    render_allocations(e);
    render_readings(e);
    render_daemon(e);
    return e.render();
}

} // namespace gua::exporter
