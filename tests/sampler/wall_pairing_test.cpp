// SPDX-License-Identifier: Apache-2.0
// Sampler: the wall time of a poll is the wall time at the poll's monotonic instant, so a thread
// that loses the CPU between its two clock reads neither leaves a gap after one tick nor makes the
// next overlap it (one daemon at 1 s ticks on a loaded machine: 108 ms each way, once in 600 s).
#include "core/clock.hpp"
#include "identity/resolver.hpp"
#include "sampler/sampler.hpp"
#include "telemetry/synthetic.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace gua::sampler::wall_pairing_test {
namespace {

constexpr TimeUs k_start = 1767607200LL * k_us_per_second; // 2026-01-05T10:00:00Z
constexpr DurationUs k_s = k_us_per_second;

/// Wall and monotonic time agree; after the `preempt_at`-th sleep, the next wall-clock read finds
/// `lost` of time gone by since the monotonic read before it (the thread was preempted).
class PreemptedClock final : public Clock {
  public:
    PreemptedClock(int preempt_at, DurationUs lost) : m_preempt_at(preempt_at), m_lost(lost) {}
    TimeUs wall_now() override {
        if (m_sleeps == m_preempt_at && !m_preempted) {
            m_preempted = true;
            m_mono += m_lost;
        }
        return k_start + m_mono;
    }
    std::int64_t mono_now() override { return m_mono; }
    void sleep_until(std::int64_t deadline, const std::atomic<bool>&) override {
        m_mono = std::max(m_mono, deadline);
        ++m_sleeps;
    }
    bool preempted() const { return m_preempted; }

  private:
    int m_preempt_at;
    DurationUs m_lost;
    std::int64_t m_mono = 0;
    int m_sleeps = 0;
    bool m_preempted = false;
};

TEST(SamplerWallPairing, APreemptionBetweenClockReadsNeitherGapsNorOverlaps) {
    for (const int preempt_at : {1, 3, 4, 7}) {
        PreemptedClock clock(preempt_at, 108 * k_us_per_ms);
        const auto source = telemetry::make_synthetic_source("classic", k_start, k_s, 1);
        identity::Resolver resolver{"/nonexistent-proc"};
        SamplerOptions options;
        options.interval_us = k_s;
        options.max_ticks = 10;
        Sampler sampler(*source, clock, resolver, options);
        std::vector<telemetry::Tick> ticks;
        const std::atomic<bool> stop{false};
        sampler.run(stop, [&](const telemetry::Tick& t) { ticks.push_back(t); });
        ASSERT_TRUE(clock.preempted()) << preempt_at;
        ASSERT_EQ(ticks.size(), 10U);
        for (std::size_t i = 1; i < ticks.size(); ++i) {
            EXPECT_EQ(ticks[i].t0, ticks[i - 1].t0 + ticks[i - 1].duration_us)
                << "preempted after sleep " << preempt_at << ", tick " << i;
        }
    }
}

} // namespace
} // namespace gua::sampler::wall_pairing_test
