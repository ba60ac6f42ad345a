// Feeding the counters: classification and attribution of each card-tick, sticky top-N users.
#include "export/metrics.hpp"

#include "audit/from_tick.hpp"

#include <algorithm>

namespace gua::exporter {

namespace {

constexpr std::size_t k_max_user_label_chars = 64;

bool allowed_in_label(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == ':' || c == '-';
}

/// Identities as the store keys them (the command is not part of an identity row).
bool same_identity(const telemetry::Identity& a, const telemetry::Identity& b) {
    return a.user == b.user && a.uid == b.uid && a.container_id == b.container_id &&
           a.pod_uid == b.pod_uid && a.slurm_job == b.slurm_job &&
           a.systemd_unit == b.systemd_unit && a.jupyter_kernel == b.jupyter_kernel;
}

} // namespace

std::string sanitize_user(std::string_view user) {
    std::string out;
    for (const char c : user.substr(0, k_max_user_label_chars)) {
        out += allowed_in_label(c) ? c : '_';
    }
    return out.empty() ? std::string("unknown") : out;
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

void Metrics::add(const CardLabels& card, const audit::CardTick& tick,
                  const std::vector<std::string>& users) {
    const audit::StateTimes states = audit::classify(tick, m_options.thresholds);
    const auto [slot, fresh] = m_gpus.try_emplace(card.uuid);
    GpuTotals& gpu = slot->second;
    if (fresh || gpu.labels.index != card.index || gpu.labels.model != card.model) {
        gpu.labels = card;
    }
    gpu.states += states;
    ++gpu.ticks;
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
    const auto nobody = static_cast<std::uint32_t>(users.size());
    audit::attribute(tick, states, m_options.thresholds, nobody, m_shares);
    for (const audit::IdentityShare& s : m_shares) {
        UserTotals& u = s.identity < nobody ? m_users[label_for(users[s.identity])]
                                            : m_users[std::string(k_no_process_user)];
        u.active_us += s.active_us;
        u.idle_held_us += s.idle_held_us;
        u.idle_held_mib_us += s.idle_held_mib_us;
    }
    audit::presence(tick, m_options.thresholds, m_present);
    for (const audit::Presence& p : m_present) {
        ++m_users[label_for(users[p.identity])].ticks;
    }
    if (tick.processes.empty() && !m_shares.empty()) {
        ++m_users[std::string(k_no_process_user)].ticks;
    }
}

void Metrics::end_restore() {
    m_restoring = false;
    std::vector<std::pair<double, std::string>> ranked;
    for (const auto& [label, u] : m_users) {
        if (label != k_no_process_user && label != k_other_user) {
            ranked.emplace_back(u.active_us + u.idle_held_us, label);
        }
    }
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    m_own_labels = std::min(ranked.size(), m_options.max_users);
    for (std::size_t i = m_options.max_users; i < ranked.size(); ++i) {
        const std::string& label = ranked[i].second;
        const UserTotals folded = m_users[label];
        UserTotals& other = m_users[std::string(k_other_user)];
        other.active_us += folded.active_us;
        other.idle_held_us += folded.idle_held_us;
        other.idle_held_mib_us += folded.idle_held_mib_us;
        other.ticks += folded.ticks;
        m_users.erase(label);
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

void Metrics::observe_readings(const telemetry::Tick& tick) {
    m_readings.clear();
    for (const telemetry::CardTickRecord& c : tick.cards) {
        const CardLabels card{c.device.uuid, c.device.index, c.device.name};
        m_readings[c.device.uuid] =
            Reading{card, c.util_pct, c.device.memory_total_mib, c.readings};
    }
}

void Metrics::observe(const telemetry::Tick& tick) {
    observe_readings(tick);
    std::vector<telemetry::Identity> identities;
    std::vector<std::string> users;
    for (const telemetry::CardTickRecord& c : tick.cards) {
        const CardLabels card{c.device.uuid, c.device.index, c.device.name};
        m_scratch = audit::to_card_tick(tick, c);
        identities.clear();
        users.clear();
        for (std::size_t i = 0; i < c.processes.size(); ++i) {
            const telemetry::Identity& id = c.processes[i].identity;
            auto it =
                std::find_if(identities.begin(), identities.end(),
                             [&](const telemetry::Identity& x) { return same_identity(x, id); });
            if (it == identities.end()) {
                identities.push_back(id);
                users.push_back(id.user);
                it = identities.end() - 1;
            }
            m_scratch.processes[i].identity = static_cast<std::uint32_t>(it - identities.begin());
        }
        add(card, m_scratch, users);
    }
}

} // namespace gua::exporter
