// SPDX-License-Identifier: Apache-2.0
// Metrics: the daemon's Prometheus counters and gauges. Counters are fed card-tick by card-tick
// through the same audit::classify / audit::attribute calls the report makes (docs/metrics.md).
#pragma once

#include "audit/attribute.hpp"
#include "audit/card_tick.hpp"
#include "audit/classify.hpp"
#include "audit/cost.hpp"
#include "audit/health.hpp"
#include "audit/pools.hpp"
#include "core/timezone.hpp"
#include "telemetry/tick.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gua::exporter {

class Exposition;

/// The `user` label of active time with no process to carry it (as in the report's §4).
inline constexpr std::string_view k_no_process_user = "(no process)";
/// The `user` label that collects every user beyond the top N.
inline constexpr std::string_view k_other_user = "other";

/// A user label: characters outside [A-Za-z0-9_.:-] become '_', at most 64 characters,
/// "unknown" when empty.
std::string sanitize_user(std::string_view user);

/// A namespace, pod or container label: characters outside [A-Za-z0-9_.:-] become '_', at most
/// 253 characters (a Kubernetes name's limit); empty stays empty (not known).
std::string sanitize_name(std::string_view name);

/// Who an identity's series is for: its user and, where the node names them, its Kubernetes
/// namespace, pod and container (or Docker/Podman container); empty when not known.
struct IdentityLabels {
    std::string user;
    std::string pod_namespace;
    std::string pod;
    std::string container;
};

/// The labels of `identity` (its user and names, unsanitized).
IdentityLabels labels_of(const telemetry::Identity& identity);

/// What the metrics need to know besides the ticks.
struct MetricsOptions {
    audit::Thresholds thresholds;
    std::size_t max_users = 20;               ///< users with their own label; the rest: other
    std::optional<double> price_per_gpu_hour; ///< dollars for every model (--price-per-gpu-hour)
    std::optional<audit::Pricing> pricing;    ///< [pricing] of gua.toml; used without the above
    std::string driver_version;               ///< for gua_gpu_info
    DurationUs interval_us = 0;               ///< the configured tick length
    /// Identity series with a namespace, pod or container label at most; beyond, an identity is
    /// counted in its user's series without them.
    std::size_t max_pod_series = 200;
    /// An identity series with a namespace, pod or container label ends (is no longer exposed)
    /// this long after the last card-tick it had a process in (tick time).
    DurationUs pod_series_ttl_us = 3600 * k_us_per_second;
    /// The zone whose office hours (audit/pools.hpp) split the waste pools and the measured time
    /// ([report] time_zone of gua.toml); exported in gua_waste_pools_info.
    TimeZone time_zone;
};

/// How a card is labelled: driver index, uuid and model.
struct CardLabels {
    std::string uuid;
    int index = 0;
    std::string model;
};

/// The delivery counters of one mail or webhook transport (docs/notify.md).
struct DeliveryCounts {
    std::string transport; ///< "smtp" or "webhook.NAME"
    std::uint64_t delivered = 0;
    std::uint64_t failed = 0;  ///< given up after the last attempt
    std::uint64_t dropped = 0; ///< refused by a full queue
    std::uint64_t retries = 0; ///< attempts after a failed one
};

/// The daemon's own health at the latest tick.
struct Health {
    std::uint64_t ticks = 0;
    std::uint64_t overruns = 0;
    std::uint64_t db_write_errors = 0; ///< ticks not stored (their write failed)
    std::uint64_t device_read_errors = 0;
    std::optional<TimeUs> last_tick_end;
    std::optional<std::int64_t> wal_bytes;
    TimeUs started = 0;
    std::vector<DeliveryCounts> deliveries; ///< policy notifications by mail and webhooks
};

/// Cumulative audit counters, the latest raw readings and health. Not thread-safe: one owner
/// feeds it and renders it; the HTTP server only ever sees rendered text.
class Metrics {
  public:
    explicit Metrics(MetricsOptions options);

    /// Adds one card-tick of `card`; `tick.processes[i].identity` indexes `identities` and
    /// `tick.allocations[i].allocation` indexes `allocations` (shares beyond it: owner unknown).
    void add(const CardLabels& card, const audit::CardTick& tick,
             const std::vector<IdentityLabels>& identities,
             const std::vector<audit::AllocationRow>& allocations = {});
    /// Starts restoring history: until end_restore(), every user gets a label.
    void begin_restore() { m_restoring = true; }
    /// Keeps the max_users users with the most GPU seconds and folds the rest into `other`.
    void end_restore();
    /// Identity series exposed now with a namespace, pod or container label.
    std::size_t pod_series() const { return m_pod_series; }
    /// Adds a freshly stored tick (its card-ticks and the latest readings of its cards).
    void observe(const telemetry::Tick& tick);
    /// Takes only the latest readings of a tick that was not stored: counters advance only with
    /// what the database holds, so a restart (which rebuilds them from it) never lowers them.
    void observe_readings(const telemetry::Tick& tick);
    /// Adds `count` driver faults of code `xid` on card `uuid` (gua_gpu_xid_events_total). At
    /// most k_max_xid_codes codes per card get their own series; later ones count as "other".
    void add_faults(const std::string& uuid, int xid, std::uint64_t count);
    static constexpr std::size_t k_max_xid_codes = 32;
    /// Sets the health figures rendered with the next render().
    void set_health(const Health& health) { m_health = health; }
    /// The exposition text (Prometheus text format 0.0.4).
    std::string render() const;

  private:
    struct GpuTotals {
        CardLabels labels;
        audit::StateTimes states;
        std::array<DurationUs, audit::k_bucket_count> bucket_us{};
        std::uint64_t ticks = 0;
        /// Sums of the counter fields of card_fields.def, in the fields' units; nullopt until a
        /// card-tick had the field (an unsupported field has no series, not a 0).
        std::array<std::optional<double>, telemetry::k_card_field_count> field_totals{};
        audit::PoolTimes pools{};   ///< the recommender's waste pools, µs
        audit::CardProfile profile; ///< the recommender's per-card evidence
        /// profile.active_held_mib_us less its steady_under part, summed tick by tick (a
        /// difference of the two sums could shrink by rounding, and a counter must never).
        double active_other_held_mib_us = 0;
        audit::HealthTotals health; ///< §9's sums, as the report's audit keeps them
        /// Active and idle-held µs attributed on this card, per user label (few per card).
        std::vector<std::pair<std::string, std::array<double, 2>>> users;
    };
    struct UserTotals {
        double active_us = 0;
        double idle_held_us = 0;
        double idle_held_mib_us = 0;
        std::uint64_t ticks = 0;
        TimeUs last_seen = 0; ///< end of the latest card-tick that added to it
        UserTotals& operator+=(const UserTotals& o);
    };
    /// An identity series' labels.
    struct SeriesKey {
        std::string user;
        std::string pod_namespace;
        std::string pod;
        std::string container;
        bool has_pod() const {
            return !pod_namespace.empty() || !pod.empty() || !container.empty();
        }
        auto operator<=>(const SeriesKey&) const = default;
    };
    struct Reading {
        CardLabels labels;
        std::optional<double> util_pct;
        std::optional<std::int64_t> mem_total_mib;
        telemetry::CardReadings readings;
        /// The allocations that owned the card at the tick's end (gua_allocation_info).
        std::vector<telemetry::AllocationOwner> allocations;
    };
    /// Owner labels of the allocated-unused counters: the first max_users distinct values keep
    /// their own label for the life of the process, later ones count as `other`.
    struct OwnerCounters {
        std::map<std::string, std::string> label; ///< sanitized owner → label
        std::map<std::string, double> unused_us;  ///< by label
        void add(const std::string& owner, double us, std::size_t max_labels);
    };
    /// Adds the tick's allocated-unused time to its owners' counters, split by overlap.
    void add_allocations(const audit::CardTick& tick, const audit::StateTimes& states,
                         const std::vector<audit::AllocationRow>& allocations);
    /// Appends the allocation series (owner counters, info gauges) to the exposition.
    void render_allocations(Exposition& e) const;
    /// Appends the per-card counters (states, buckets, fields, evidence, health, users, dollars).
    void render_cards(Exposition& e) const;
    /// Appends the idle and allocated-unused dollars of one card when a price is known.
    void render_waste_dollars(Exposition& e, const std::string& gpu, std::string_view model,
                              const audit::StateTimes& states) const;
    /// Appends the identity series.
    void render_identities(Exposition& e) const;
    /// Appends the latest readings of the cards (info, gauges).
    void render_readings(Exposition& e) const;
    /// Appends the Xid event counters (per card and code).
    void render_xid_events(Exposition& e) const;
    /// Appends the daemon's own series.
    void render_daemon(Exposition& e) const;
    const std::string& label_for(const std::string& user);
    /// The series of `labels` (its pod labels dropped when max_pod_series are taken), seen at
    /// `end`; its key's `user` is the user label.
    std::pair<const SeriesKey, UserTotals>& series_for(const IdentityLabels& labels, TimeUs end);
    /// (weekday 0 = Sunday, hour) of `t` in the options' zone, looked up once per quarter hour.
    std::pair<int, int> cell_of(TimeUs t);
    /// Ends the pod series not seen for pod_series_ttl_us before `now` (at most once a minute).
    void expire_pod_series(TimeUs now);

    MetricsOptions m_options;
    bool m_restoring = false;
    std::map<std::string, GpuTotals> m_gpus;                  ///< by uuid
    std::map<SeriesKey, UserTotals> m_users;                  ///< identity series
    std::size_t m_pod_series = 0;                             ///< of them, with pod labels
    TimeUs m_expired_at = 0;                                  ///< tick time of the last expiry
    std::map<std::string, std::string> m_user_label;          ///< sanitized user → label
    std::unordered_map<std::string, std::string> m_raw_label; ///< user → label (cache)
    std::size_t m_own_labels = 0;
    std::map<std::string, Reading> m_readings; ///< cards of the latest tick, by uuid
    OwnerCounters m_unused_by_user;            ///< allocated-unused by the allocation's user
    OwnerCounters m_unused_by_account;         ///< … by Slurm account or Kubernetes namespace
    Health m_health;
    /// Driver faults by card uuid, then code label ("43", …, "other").
    std::map<std::string, std::map<std::string, std::uint64_t>> m_xid_events;
    std::vector<audit::IdentityShare> m_shares;
    std::vector<audit::Presence> m_present;
    audit::CardTick m_scratch;
    audit::PoolTimes m_tick_pools{};
    audit::CardProfile m_tick_profile;
    std::int64_t m_cached_quarter = std::numeric_limits<std::int64_t>::min();
    std::pair<int, int> m_cached_cell{0, 0};
};

} // namespace gua::exporter
