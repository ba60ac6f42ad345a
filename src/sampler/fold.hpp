// TickBuilder: folds the polls of one interval into a Tick (utilization integrated over time).
#pragma once

#include "identity/resolver.hpp"
#include "telemetry/model.hpp"
#include "telemetry/tick.hpp"

#include <map>
#include <string>
#include <unordered_map>
#include <utility>

namespace gua::sampler {

/// Accumulates polls into one tick. Pure apart from identity resolution through the resolver.
class TickBuilder {
  public:
    /// `active_threshold_pct`: utilization at or above it counts as active time.
    TickBuilder(double active_threshold_pct, identity::Resolver& resolver);

    /// Starts a new tick at wall time `t0`.
    void start(TimeUs t0);
    /// Folds one poll covering `span_us` of time (since the previous poll) for `devices`.
    void add_poll(const std::vector<telemetry::DevicePoll>& polls, DurationUs span_us,
                  const std::unordered_map<std::string, telemetry::DeviceInfo>& devices);
    /// Finishes the tick into `out`, reusing its vectors and strings; cards lost in any poll of
    /// the tick are listed, not recorded. Processes of a card come sorted by (pid, type). `out`
    /// must be new or as the previous finish() left it (identities it holds are kept then).
    void finish(std::uint64_t seq, telemetry::Tick& out);
    telemetry::Tick finish(std::uint64_t seq) {
        telemetry::Tick tick;
        finish(seq, tick);
        return tick;
    }

  private:
    struct ProcAcc {
        telemetry::ProcessTick tick;
        double sm_weighted = 0;
        DurationUs sm_span = 0;
        bool seen = false;  ///< polled during the current tick
        bool fresh = false; ///< its identity was (re)written during the current tick
        /// identity::ProcessFacts::serial of the identity held; none for a new or synthetic one.
        std::optional<std::uint64_t> serial;
    };
    /// One card's accumulators. Kept across ticks (start() resets them) so that their storage,
    /// and that of the process accumulators, is reused instead of reallocated every tick; a
    /// process polled again keeps its accumulator (and its identity unless it changed).
    struct CardAcc {
        telemetry::CardTickRecord record; ///< without processes (those are in `processes`)
        DurationUs span = 0;
        DurationUs measured = 0;
        double util_weighted = 0;
        double active = 0;
        std::array<double, 4> buckets{};
        bool lost = false;
        bool present = false; ///< polled during the current tick
        /// The first `live` entries are the processes of this tick and the previous one; `order`
        /// indexes them by (pid, type).
        std::vector<ProcAcc> processes;
        std::vector<std::uint32_t> order;
        std::size_t live = 0;
        std::size_t hint = 0; ///< where in `order` the next polled process probably is
        void reset();
        /// Where (pid, type) is or would go in `order`.
        std::vector<std::uint32_t>::iterator position(std::uint32_t pid,
                                                      telemetry::ProcessType type);
        ProcAcc* find(std::uint32_t pid, telemetry::ProcessType type);
        ProcAcc& insert(std::uint32_t pid, telemetry::ProcessType type);
        /// Drops the processes not polled during the tick that ends.
        void drop_unseen();
    };

    /// Brings `acc`'s identity up to date for `reading` at its first poll of the tick.
    void refresh_identity(ProcAcc& acc, const telemetry::ProcessReading& reading);

    double m_threshold;
    identity::Resolver& m_resolver;
    TimeUs m_t0 = 0;
    DurationUs m_span = 0;
    std::map<std::string, CardAcc> m_cards;
    const telemetry::Tick* m_last_out = nullptr; ///< the tick the previous finish() filled
};

} // namespace gua::sampler
