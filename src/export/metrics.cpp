// SPDX-License-Identifier: Apache-2.0
// Feeding the counters: classification and attribution of each card-tick, sticky top-N users.
#include "export/metrics.hpp"

#include "audit/from_tick.hpp"
#include "audit/pattern.hpp"
#include "store/raw.hpp"

#include <algorithm>

namespace gua::exporter {

namespace {

constexpr std::size_t k_max_user_label_chars = 64;
constexpr std::size_t k_max_name_label_chars = 253;
constexpr DurationUs k_expiry_period_us = 60 * k_us_per_second;
/// Zone offsets are whole quarter hours: office hours are constant within a UTC quarter hour.
constexpr DurationUs k_quarter_us = 15 * k_us_per_minute;

bool allowed_in_label(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == ':' || c == '-';
}

/// Identities as the store keys them (the command is not part of an identity row), with the
/// names that label their series.
bool same_identity(const telemetry::Identity& a, const telemetry::Identity& b) {
    return a.user == b.user && a.uid == b.uid && a.container_id == b.container_id &&
           a.pod_uid == b.pod_uid && a.slurm_job == b.slurm_job &&
           a.systemd_unit == b.systemd_unit && a.jupyter_kernel == b.jupyter_kernel &&
           a.pod_namespace == b.pod_namespace && a.pod_name == b.pod_name &&
           a.container_name == b.container_name;
}

std::string sanitize(std::string_view text, std::size_t max_chars) {
    std::string out;
    for (const char c : text.substr(0, max_chars)) {
        out += allowed_in_label(c) ? c : '_';
    }
    return out;
}

/// Moves user `label`'s per-card time into `other` (a user beyond max_users after a restore).
void fold_card_user(std::vector<std::pair<std::string, std::array<double, 2>>>& users,
                    const std::string& label) {
    const auto from =
        std::find_if(users.begin(), users.end(), [&](const auto& x) { return x.first == label; });
    if (from == users.end()) {
        return;
    }
    const std::array<double, 2> times = from->second;
    users.erase(from);
    auto into = std::find_if(users.begin(), users.end(),
                             [](const auto& x) { return x.first == k_other_user; });
    if (into == users.end()) {
        into = users.insert(users.end(), {std::string(k_other_user), {}});
    }
    into->second[0] += times[0];
    into->second[1] += times[1];
}

} // namespace

std::string sanitize_user(std::string_view user) {
    std::string out = sanitize(user, k_max_user_label_chars);
    return out.empty() ? std::string("unknown") : out;
}

std::string sanitize_name(std::string_view name) {
    return sanitize(name, k_max_name_label_chars);
}

IdentityLabels labels_of(const telemetry::Identity& identity) {
    return IdentityLabels{identity.user, identity.pod_namespace, identity.pod_name,
                          identity.container_name};
}

Metrics::UserTotals& Metrics::UserTotals::operator+=(const UserTotals& o) {
    active_us += o.active_us;
    idle_held_us += o.idle_held_us;
    idle_held_mib_us += o.idle_held_mib_us;
    ticks += o.ticks;
    last_seen = std::max(last_seen, o.last_seen);
    return *this;
}

Metrics::Metrics(MetricsOptions options) : m_options(std::move(options)) {}

const std::string& Metrics::label_for(const std::string& user) {
    if (const auto cached = m_raw_label.find(user); cached != m_raw_label.end()) {
        return cached->second;
    }
    std::string clean = sanitize_user(user);
    auto it = m_user_label.find(clean);
    if (it == m_user_label.end()) {
        // A label, once given, is kept for the life of the process so every series stays
        // monotonic.
        const bool own = m_restoring || m_own_labels < m_options.max_users;
        m_own_labels += own ? 1 : 0;
        std::string label = own ? clean : std::string(k_other_user);
        it = m_user_label.emplace(std::move(clean), std::move(label)).first;
    }
    return m_raw_label.emplace(user, it->second).first->second;
}

std::pair<int, int> Metrics::cell_of(TimeUs t) {
    const std::int64_t quarter = t / k_quarter_us - (t % k_quarter_us < 0 ? 1 : 0);
    if (quarter != m_cached_quarter) {
        m_cached_quarter = quarter;
        m_cached_cell = m_options.time_zone.weekday_hour(quarter * k_quarter_us);
    }
    return m_cached_cell;
}

std::pair<const Metrics::SeriesKey, Metrics::UserTotals>&
Metrics::series_for(const IdentityLabels& labels, TimeUs end) {
    SeriesKey key{labels.user == k_no_process_user ? labels.user : label_for(labels.user),
                  sanitize_name(labels.pod_namespace), sanitize_name(labels.pod),
                  sanitize_name(labels.container)};
    auto it = m_users.find(key);
    if (it == m_users.end() && key.has_pod()) {
        if (m_pod_series < m_options.max_pod_series) {
            ++m_pod_series;
        } else {
            key.pod_namespace.clear();
            key.pod.clear();
            key.container.clear();
        }
    }
    if (it == m_users.end()) {
        it = m_users.try_emplace(std::move(key)).first;
    }
    it->second.last_seen = std::max(it->second.last_seen, end);
    return *it;
}

void Metrics::expire_pod_series(TimeUs now) {
    if (now - m_expired_at < k_expiry_period_us) {
        return;
    }
    m_expired_at = now;
    for (auto it = m_users.begin(); it != m_users.end();) {
        if (it->first.has_pod() && it->second.last_seen < now - m_options.pod_series_ttl_us) {
            --m_pod_series;
            it = m_users.erase(it);
        } else {
            ++it;
        }
    }
}

void Metrics::add(const CardLabels& card, const audit::CardTick& tick,
                  const std::vector<IdentityLabels>& identities,
                  const std::vector<audit::AllocationRow>& allocations) {
    const TimeUs end = tick.t0 + tick.duration_us;
    expire_pod_series(end);
    const audit::StateTimes states = audit::classify(tick, m_options.thresholds);
    add_allocations(tick, states, allocations);
    const auto [slot, fresh] = m_gpus.try_emplace(card.uuid);
    GpuTotals& gpu = slot->second;
    if (fresh || gpu.labels.index != card.index || gpu.labels.model != card.model) {
        gpu.labels = card;
    }
    gpu.states += states;
    ++gpu.ticks;
    audit::add_health(tick, states, gpu.health);
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        if (f.metric_kind == telemetry::MetricKind::counter) {
            if (const std::optional<std::int64_t>& v = tick.readings.*f.value) {
                std::optional<double>& total = gpu.field_totals[static_cast<std::size_t>(f.field)];
                total = total.value_or(0.0) + static_cast<double>(*v);
            }
        }
    }
    for (std::size_t b = 0; b < audit::k_bucket_count; ++b) {
        gpu.bucket_us[b] += tick.bucket_us[b];
    }
    const auto [weekday, hour] = cell_of(tick.t0);
    m_tick_pools = {};
    m_tick_profile = {};
    audit::add_to_pools(tick, states, audit::pattern_of(tick),
                        audit::held_mib(tick, m_options.thresholds),
                        audit::is_off_hours(weekday, hour), m_tick_pools, m_tick_profile);
    for (std::size_t p = 0; p < audit::k_pool_count; ++p) {
        gpu.pools[p] += m_tick_pools[p];
    }
    gpu.profile += m_tick_profile;
    gpu.active_other_held_mib_us +=
        m_tick_profile.active_held_mib_us - m_tick_profile.steady_under_held_mib_us;
    const auto nobody = static_cast<std::uint32_t>(identities.size());
    const IdentityLabels no_process{std::string(k_no_process_user), {}, {}, {}};
    audit::attribute(tick, states, m_options.thresholds, nobody, m_shares);
    for (const audit::IdentityShare& s : m_shares) {
        auto& [key, u] = series_for(s.identity < nobody ? identities[s.identity] : no_process, end);
        u.active_us += s.active_us;
        u.idle_held_us += s.idle_held_us;
        u.idle_held_mib_us += s.idle_held_mib_us;
        // The per-card evidence of §8, by user label only (bounded by max_users).
        const std::string& user = key.user; // a lambda may not capture a structured binding
        auto on_card = std::find_if(gpu.users.begin(), gpu.users.end(),
                                    [&user](const auto& x) { return x.first == user; });
        if (on_card == gpu.users.end()) {
            on_card = gpu.users.insert(gpu.users.end(), {user, {}});
        }
        on_card->second[0] += s.active_us;
        on_card->second[1] += s.idle_held_us;
    }
    audit::presence(tick, m_options.thresholds, m_present);
    for (const audit::Presence& p : m_present) {
        ++series_for(identities[p.identity], end).second.ticks;
    }
    if (tick.processes.empty() && !m_shares.empty()) {
        ++series_for(no_process, end).second.ticks;
    }
}

void Metrics::end_restore() {
    m_restoring = false;
    std::map<std::string, double> seconds_of; // by user label
    for (const auto& [key, u] : m_users) {
        if (key.user != k_no_process_user && key.user != k_other_user) {
            seconds_of[key.user] += u.active_us + u.idle_held_us;
        }
    }
    std::vector<std::pair<double, std::string>> ranked;
    for (const auto& [label, total] : seconds_of) {
        ranked.emplace_back(total, label);
    }
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    m_own_labels = std::min(ranked.size(), m_options.max_users);
    for (std::size_t i = m_options.max_users; i < ranked.size(); ++i) {
        const std::string& label = ranked[i].second;
        for (auto it = m_users.begin(); it != m_users.end();) {
            if (it->first.user != label) {
                ++it;
                continue;
            }
            SeriesKey folded = it->first;
            folded.user = std::string(k_other_user);
            const UserTotals totals = it->second;
            m_pod_series -= it->first.has_pod() ? 1 : 0;
            it = m_users.erase(it);
            const auto [into, fresh] = m_users.try_emplace(std::move(folded));
            into->second += totals;
            m_pod_series += fresh && into->first.has_pod() ? 1 : 0;
        }
        for (auto& [uuid, gpu] : m_gpus) {
            fold_card_user(gpu.users, label);
        }
        for (auto& [clean, mapped] : m_user_label) {
            if (mapped == label) {
                mapped = std::string(k_other_user);
            }
        }
        for (auto& [raw, mapped] : m_raw_label) {
            if (mapped == label) {
                mapped = std::string(k_other_user);
            }
        }
    }
}

void Metrics::add_faults(const std::string& uuid, int xid, std::uint64_t count) {
    std::map<std::string, std::uint64_t>& codes = m_xid_events[uuid];
    std::string code = std::to_string(xid);
    if (codes.count(code) == 0 && codes.size() >= k_max_xid_codes) {
        code = "other";
    }
    codes[code] += count;
}

void Metrics::observe_readings(const telemetry::Tick& tick) {
    m_readings.clear();
    for (const telemetry::CardTickRecord& c : tick.cards) {
        const CardLabels card{c.device.uuid, c.device.index, c.device.name};
        Reading& r = m_readings[c.device.uuid];
        r = Reading{card, c.util_pct, c.device.memory_total_mib, c.readings, {}};
        for (const telemetry::AllocationOwner& a : c.allocations) {
            if (a.end >= tick.t0 + tick.duration_us) {
                r.allocations.push_back(a); // still running when the tick ended
            }
        }
    }
}

void Metrics::observe(const telemetry::Tick& tick) {
    observe_readings(tick);
    std::vector<telemetry::Identity> identities;
    std::vector<IdentityLabels> labels;
    std::vector<audit::AllocationRow> owners;
    for (const telemetry::CardTickRecord& c : tick.cards) {
        const CardLabels card{c.device.uuid, c.device.index, c.device.name};
        m_scratch = audit::to_card_tick(tick, c);
        // As the database keeps it, so a restart (which restores from it) never lowers a sum.
        store::round_as_stored(m_scratch);
        identities.clear();
        labels.clear();
        for (std::size_t i = 0; i < c.processes.size(); ++i) {
            const telemetry::Identity& id = c.processes[i].identity;
            auto it =
                std::find_if(identities.begin(), identities.end(),
                             [&](const telemetry::Identity& x) { return same_identity(x, id); });
            if (it == identities.end()) {
                identities.push_back(id);
                labels.push_back(labels_of(id));
                it = identities.end() - 1;
            }
            m_scratch.processes[i].identity = static_cast<std::uint32_t>(it - identities.begin());
        }
        owners.clear();
        m_scratch.allocations.clear();
        for (const telemetry::AllocationOwner& a : c.allocations) {
            m_scratch.allocations.push_back(
                audit::AllocationShare{static_cast<std::uint32_t>(owners.size()), a.end - a.begin});
            owners.push_back(
                audit::AllocationRow{a.kind, a.id, a.user, a.account, "", a.begin, a.end});
        }
        add(card, m_scratch, labels, owners);
    }
}

} // namespace gua::exporter
