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

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>

namespace gua::sampler {

/// A watched process that exited between two polls, placed on the sampler's monotonic clock.
struct ProcessExit {
    std::uint32_t pid = 0;
    std::uint64_t start_ticks = 0; ///< its /proc start time (the pid-reuse guard)
    std::int64_t mono_us = 0;      ///< when it exited: the middle of the check that saw it
};

/// Where a poll lies in time, so that a process that started or exited inside the poll's span is
/// weighed for the part of the span it was alive (docs/measurement.md). Default: unknown, and
/// the processes listed at the poll stand for its whole span.
struct PollTimes {
    std::int64_t end_mono_us = 0; ///< the poll's instant on the monotonic clock (its span's end)
    /// Boot time − monotonic time at the poll, µs: places /proc start times; nullopt: unknown.
    std::optional<std::int64_t> boot_offset_us;
    std::span<const ProcessExit> exits; ///< the exits seen since the previous poll
};

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
    /// Folds one poll covering `span_us` of time (since the previous poll) for `devices`;
    /// `times` places process starts and exits inside the span.
    void add_poll(const std::vector<telemetry::DevicePoll>& polls, DurationUs span_us,
                  const std::unordered_map<std::string, telemetry::DeviceInfo>& devices,
                  const PollTimes& times = {});
    /// Adds `us` of time no poll measured (a forward step of the wall clock): it lengthens the
    /// tick and is unmeasured on every card of the tick.
    void add_unmeasured(DurationUs us) { m_span += std::max<DurationUs>(us, 0); }
    /// The time folded into the tick so far.
    DurationUs span() const { return m_span; }
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
        /// Its identity's names were deferred by the resolver's budget at its latest poll: its
        /// part of that poll is attributed to no one (flagged).
        bool names_deferred = false;
        std::uint64_t listed_at = 0;  ///< CardAcc::polls of the latest poll that listed it
        std::int64_t last_weight = 0; ///< its memory weight at that poll
        bool last_mem_known = false;  ///< the driver said its memory at that poll
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
        std::uint64_t polls = 0; ///< polls of this card that were not lost, ever (not reset)
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
    /// Folds the stand-in `card` replaces (polled earlier in the tick) into `card`.
    void take_over_stand_in(CardAcc& card);
    void add_card_poll(CardAcc& card, const telemetry::DevicePoll& poll, DurationUs span_us);
    /// Merges the poll's processes into `card` (m_poll_procs: their accumulators, in the poll's
    /// order) and splits the poll's `active` µs among them by SM share; what cannot be split
    /// (failed per-process read, deferred identities) is holders-unknown time.
    void attribute_active(CardAcc& card, const telemetry::DevicePoll& poll, DurationUs span_us,
                          double active);
    /// One holder over part of a poll span: [from, to) µs from the span's start.
    struct Segment {
        std::size_t index; ///< in CardAcc::processes
        std::int64_t weight;
        bool mem_known;
        bool deferred; ///< its part is attributed to no one (names deferred)
        double from;
        double to;
    };
    /// Decides the poll's `idle_us` of measured time below the active threshold from the holders
    /// listed in `poll` (m_poll_procs holds their accumulators, in the poll's order), each from
    /// its start when that falls inside the span, and the holders that exited inside it.
    void add_idle(CardAcc& card, const telemetry::DevicePoll& poll, double idle_us,
                  DurationUs span_us);
    /// True when a holder of the poll may have started, or one exited, inside its span.
    bool changes_inside(const CardAcc& card, const telemetry::DevicePoll& poll,
                        DurationUs span_us) const;
    /// Decides `idle_us` from the holders listed in `poll` standing for its whole span.
    void decide_listed(CardAcc& card, const telemetry::DevicePoll& poll, double idle_us);
    /// Fills m_segments with the holders of the poll's span.
    void collect_holders(CardAcc& card, const telemetry::DevicePoll& poll, DurationUs span_us);
    /// Decides `idle_us` of idle time spread over [a, b) of the span from m_segments alive then.
    void decide(CardAcc& card, double idle_us, double a, double b);
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
    /// Crosses the finished record of `card` with the allocation source, when there is one.
    void cross_allocations(CardAcc& card) const;
    /// Writes the processes of `card` into `out` (whose vector is reused): their active and
    /// idle-held parts rounded so that they add up to the card's. `same_card`: `out` holds this
    /// card's record of the previous tick, whose identities are kept where unchanged.
    void write_processes(const CardAcc& card, bool same_card, telemetry::CardTickRecord& out) const;
    /// Writes one process's key, identity and readings into `p`; its parts are left unset.
    static void write_process(const ProcAcc& acc, bool same_card, telemetry::ProcessTick& p);

    audit::Thresholds m_thresholds;
    identity::Resolver& m_resolver;
    TimeUs m_t0 = 0;
    DurationUs m_span = 0;
    std::map<std::string, CardAcc> m_cards;
    const PollTimes* m_times = nullptr; ///< of the poll being folded
    std::int64_t m_ticks_per_s = 100;   ///< clock ticks of /proc start times per second
    std::vector<Segment> m_segments;    ///< reused by add_idle()
    std::vector<double> m_cuts;         ///< reused by add_idle()
    const telemetry::Tick* m_last_out = nullptr;
    const alloc::AllocationSource* m_allocations = nullptr;
    const telemetry::DeviceSource* m_device_source = nullptr;
    /// Indexes in CardAcc::processes of the poll's processes, in the poll's order (reused).
    std::vector<std::size_t> m_poll_procs; ///< the tick the previous finish() filled
};

} // namespace gua::sampler
