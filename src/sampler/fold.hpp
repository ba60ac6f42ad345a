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
    /// Finishes the tick; cards lost in any poll of the tick are listed, not recorded.
    telemetry::Tick finish(std::uint64_t seq);

  private:
    struct ProcAcc {
        telemetry::ProcessTick tick;
        double sm_weighted = 0;
        DurationUs sm_span = 0;
    };
    struct CardAcc {
        telemetry::CardTickRecord record;
        DurationUs span = 0;
        DurationUs measured = 0;
        double util_weighted = 0;
        double active = 0;
        std::array<double, 4> buckets{};
        bool lost = false;
        std::map<std::pair<std::uint32_t, int>, ProcAcc> processes;
    };

    double m_threshold;
    identity::Resolver& m_resolver;
    TimeUs m_t0 = 0;
    DurationUs m_span = 0;
    std::map<std::string, CardAcc> m_cards;
};

} // namespace gua::sampler
