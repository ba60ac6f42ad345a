// SPDX-License-Identifier: Apache-2.0
// TickBuilder: folds the polls of one interval into a Tick — utilization integrated over the
// measured time, unmeasured time kept apart, idle time without holders, per-process active time.
#pragma once

#include "audit/card_tick.hpp"
#include "identity/resolver.hpp"
#include "sampler/allocation_fold.hpp"
#include "telemetry/device_source.hpp"
#include "telemetry/model.hpp"
#include "telemetry/tick.hpp"

#include <array>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace gua::sampler {

/// Accumulates polls into one tick, poll by poll (docs/measurement.md). Pure apart from
/// identity resolution through the resolver.
class TickBuilder {
  public:
    /// `thresholds`: utilization at or above active_util_pct counts as active time; which
    /// process types are holders (graphics_is_holder). The resolver must outlive the builder.
    TickBuilder(const audit::Thresholds& thresholds, identity::Resolver& resolver);

    /// Crosses each card-tick with what `source` says owned the card (docs/allocations.md);
    /// `devices` names MIG instances' GPU-instance ids. Both must outlive the builder; without a
    /// source (the default) card-ticks carry no allocation.
    void set_allocations(const alloc::AllocationSource* source,
                         const telemetry::DeviceSource* devices) {
        m_allocations = source;
        m_device_source = devices;
    }
    /// Starts a new tick at wall time `t0`.
    void start(TimeUs t0);
    /// Takes the counter readings of `polls` (the source's priming poll, before the first tick)
    /// as the counters' baselines and folds nothing else, so that the first tick's energy covers
    /// it from its start. Call after start().
    void prime(const std::vector<telemetry::DevicePoll>& polls);
    /// Folds one poll covering `span_us` of time (since the previous poll) for `devices`.
    void add_poll(const std::vector<telemetry::DevicePoll>& polls, DurationUs span_us,
                  const std::unordered_map<std::string, telemetry::DeviceInfo>& devices);
    /// Finishes the tick into `out`, reusing its vectors and strings. Every card polled during
    /// the tick gets a card-tick: time not measured (lost samples, a lost card, polls without a
    /// reading, polls the card missed) is its unmeasured_us, never extrapolated; a card lost for
    /// the whole tick has active_us 0 and unmeasured_us = duration; a card never measurable (MIG)
    /// has active_us nullopt and unmeasured_us 0. Cards lost in any poll are also listed in
    /// lost_uuids. Processes of a card come sorted by (pid, type, start time), one per process:
    /// a pid reused within the tick gives two. `out` must be new or as the previous finish() left
    /// it (identities it holds are kept then).
    void finish(std::uint64_t seq, telemetry::Tick& out);
    telemetry::Tick finish(std::uint64_t seq) {
        telemetry::Tick tick;
        finish(seq, tick);
        return tick;
    }

  private:
    struct ProcAcc {
        telemetry::ProcessTick tick; ///< pid, type and start_ticks are its key
        double sm_weighted = 0;
        DurationUs sm_span = 0;
        double active = 0;    ///< attributed active µs of the tick
        double idle_held = 0; ///< attributed idle-held µs of the tick (decided poll by poll)
        bool has_sm = false;  ///< had a per-process SM reading during the tick
        bool seen = false;    ///< polled during the current tick
        bool fresh = false;   ///< its identity was (re)written during the current tick
        /// identity::ProcessFacts::serial of the identity held; none for a new or synthetic one.
        std::optional<std::uint64_t> serial;
    };
    /// One card's accumulators. Kept across ticks (start() resets them) so that their storage,
    /// and that of the process accumulators, is reused instead of reallocated every tick; a
    /// process polled again keeps its accumulator (and its identity unless it changed).
    struct CardAcc {
        telemetry::CardTickRecord record; ///< without processes (those are in `processes`)
        double measured = 0;              ///< µs whose utilization was measured
        double util_weighted = 0;         ///< Σ pct × µs over the measured time
        double active = 0;
        double idle_unlisted = 0;
        double idle_unknown = 0;
        double idle_held = 0; ///< measured idle µs held (poll by poll) above held_mib
        std::array<double, 4> buckets{};
        int measured_polls = 0;
        /// State of a counter field (card_fields.def): kept across ticks, so that a tick's
        /// increase starts at the previous tick's last reading.
        struct Counter {
            std::optional<std::int64_t> last; ///< the latest reading
            std::int64_t increase = 0;        ///< since the tick started
            std::int64_t carry = 0;           ///< remainder of the quanta of earlier ticks
            bool known = false;               ///< an increase was read during the tick
        };
        std::array<Counter, telemetry::k_card_field_count> counters{};
        /// State of a mean field during the tick: Σ reading × span and Σ span over the polls
        /// that had a reading.
        struct Mean {
            double weighted = 0;
            DurationUs span = 0;
        };
        std::array<Mean, telemetry::k_card_field_count> means{};
        bool lost = false;     ///< lost in a poll of the tick
        bool partial = false;  ///< a poll reported lost samples or a partial source
        bool snapshot = false; ///< a poll measured with a snapshot
        bool present = false;  ///< polled during the current tick
        /// The first `live` entries are the processes of this tick and the previous one; `order`
        /// indexes them by (pid, type, start time).
        std::vector<ProcAcc> processes;
        std::vector<std::uint32_t> order;
        std::size_t live = 0;
        std::size_t hint = 0;      ///< where in `order` the next polled process probably is
        AllocationFold allocation; ///< the tick's poll decisions, for the allocation crossing
        void reset();
        /// Where (pid, type, start) is or would go in `order`.
        std::vector<std::uint32_t>::iterator position(std::uint32_t pid,
                                                      telemetry::ProcessType type,
                                                      std::optional<std::uint64_t> start);
        ProcAcc* find(std::uint32_t pid, telemetry::ProcessType type,
                      std::optional<std::uint64_t> start);
        /// The latest-started process (pid, type) polled during this tick or the previous one.
        ProcAcc* find_latest(std::uint32_t pid, telemetry::ProcessType type);
        ProcAcc& insert(std::uint32_t pid, telemetry::ProcessType type,
                        std::optional<std::uint64_t> start);
        /// Drops the processes not polled during the tick that ends.
        void drop_unseen();
    };

    /// Folds one poll of a card that was not lost.
    void add_card_poll(CardAcc& card, const telemetry::DevicePoll& poll, DurationUs span_us);
    /// Decides the poll's `idle_us` of measured time below the active threshold from the holders
    /// listed in `poll` (m_poll_procs holds their accumulators, in the poll's order).
    void add_idle(CardAcc& card, const telemetry::DevicePoll& poll, double idle_us);
    bool is_holder_type(telemetry::ProcessType type) const;
    /// Memory weight of a listed process: its memory, or held_mib when the driver did not say.
    std::int64_t weight_of(const telemetry::ProcessReading& p) const;
    /// Folds the card readings of a poll covering `span_us` into `card` by each field's rule.
    static void fold_readings(CardAcc& card, const telemetry::CardReadings& poll,
                              DurationUs span_us);
    /// Sets the ghost memory of `r` from `poll` when the poll tells it (the latest poll wins).
    static void fold_ghost(telemetry::CardReadings& r, const telemetry::DevicePoll& poll);
    /// The accumulator of `reading` in `card` (created if new), its identity up to date.
    ProcAcc& process_of(CardAcc& card, const telemetry::ProcessReading& reading);
    /// Writes the card-level totals of `card` into its record (the tick lasted m_span).
    void finish_card(CardAcc& card) const;

    audit::Thresholds m_thresholds;
    identity::Resolver& m_resolver;
    TimeUs m_t0 = 0;
    DurationUs m_span = 0;
    std::map<std::string, CardAcc> m_cards;
    const telemetry::Tick* m_last_out = nullptr;
    const alloc::AllocationSource* m_allocations = nullptr;
    const telemetry::DeviceSource* m_device_source = nullptr;
    /// Indexes in CardAcc::processes of the poll's processes, in the poll's order (reused).
    std::vector<std::size_t> m_poll_procs; ///< the tick the previous finish() filled
};

} // namespace gua::sampler
