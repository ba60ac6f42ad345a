// SPDX-License-Identifier: Apache-2.0
// Sampler: the tick loop on simulated time — tick count, t0 and duration, polls per tick (as
// often as the source's sample buffers need), and no catch-up bursts when the loop falls behind.
#include "audit/window.hpp"
#include "core/clock.hpp"
#include "identity/resolver.hpp"
#include "nvml/fake_driver.hpp"
#include "sampler/sampler.hpp"
#include "telemetry/synthetic.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

namespace gua::sampler {
namespace sampler_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1767607200LL * k_us_per_second; // 2026-01-05T10:00:00Z
constexpr DurationUs k_s = k_us_per_second;

struct Recorded {
    std::vector<telemetry::Tick> ticks;
    std::vector<DurationUs> overruns;
};

Recorded run_sampler(Clock& clock, telemetry::DeviceSource& source, DurationUs interval,
                     std::uint64_t max_ticks,
                     const std::function<void(const telemetry::Tick&)>& also = {}) {
    identity::Resolver resolver{"/nonexistent-proc"};
    SamplerOptions options;
    options.interval_us = interval;
    options.max_ticks = max_ticks;
    Sampler sampler(source, clock, resolver, options);
    Recorded r;
    const std::atomic<bool> stop{false};
    sampler.run(
        stop,
        [&](const telemetry::Tick& t) {
            r.ticks.push_back(t);
            if (also) {
                also(t);
            }
        },
        [&](DurationUs late) { r.overruns.push_back(late); });
    EXPECT_EQ(sampler.ticks(), r.ticks.size());
    return r;
}

void expect_contiguous(const std::vector<telemetry::Tick>& ticks);

TEST(Sampler, DeliversTicksWithT0AndDuration) {
    SimulatedClock clock(k_start);
    const auto source = telemetry::make_synthetic_source("classic", k_start, k_s, 1);
    const Recorded r = run_sampler(clock, *source, k_s, 10);
    ASSERT_EQ(r.ticks.size(), 10U);
    EXPECT_TRUE(r.overruns.empty());
    for (std::size_t i = 0; i < r.ticks.size(); ++i) {
        const telemetry::Tick& t = r.ticks[i];
        EXPECT_EQ(t.seq, i);
        EXPECT_EQ(t.t0, k_start + static_cast<TimeUs>(i) * k_s);
        EXPECT_EQ(t.duration_us, k_s);
        ASSERT_EQ(t.cards.size(), 3U);
        EXPECT_TRUE(t.lost_uuids.empty());
        // The classic workload: GPU-0 trains in phases 0–1 of 5, GPU-1 and GPU-2 never.
        const bool training = i % 5 < 2;
        EXPECT_EQ(t.cards[0].active_us, training ? k_s : 0) << i;
        EXPECT_EQ(t.cards[0].processes.size(), i % 5 < 4 ? 1U : 0U) << i;
        EXPECT_EQ(t.cards[1].active_us, 0);
        EXPECT_EQ(t.cards[1].processes.size(), 2U);
        EXPECT_EQ(t.cards[2].processes.at(0).type, telemetry::ProcessType::graphics);
        EXPECT_EQ(t.cards[2].processes.at(0).identity.user, "root");
    }
    EXPECT_EQ(clock.wall_now(), k_start + 10 * k_s);
}

TEST(Sampler, LongIntervalsArePolledAtLeastEveryFiveSeconds) {
    SimulatedClock clock(k_start);
    const auto source = telemetry::make_synthetic_source("cotenants", k_start, 30 * k_s, 1);
    const Recorded r = run_sampler(clock, *source, 30 * k_s, 3);
    ASSERT_EQ(r.ticks.size(), 3U);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(r.ticks[i].t0, k_start + static_cast<TimeUs>(i) * 30 * k_s);
        EXPECT_EQ(r.ticks[i].duration_us, 30 * k_s);
        ASSERT_EQ(r.ticks[i].cards.size(), 1U);
        EXPECT_EQ(r.ticks[i].cards[0].util_samples, 6U); // 30 s / 5 s polls
        EXPECT_EQ(r.ticks[i].cards[0].processes.size(), 2U);
    }
    // cotenants: grace trains in ticks 0 and 1 of every 3.
    EXPECT_EQ(r.ticks[0].cards[0].active_us, 30 * k_s);
    EXPECT_EQ(r.ticks[1].cards[0].active_us, 30 * k_s);
    EXPECT_EQ(r.ticks[2].cards[0].active_us, 0);
}

TEST(Sampler, StopEndsTheLoop) {
    SimulatedClock clock(k_start);
    const auto source = telemetry::make_synthetic_source("classic", k_start, k_s, 1);
    identity::Resolver resolver{"/nonexistent-proc"};
    Sampler sampler(*source, clock, resolver, SamplerOptions{k_s, 5 * k_s, 10.0, std::nullopt});
    std::atomic<bool> stop{false};
    std::size_t seen = 0;
    sampler.run(stop, [&](const telemetry::Tick&) {
        if (++seen == 4) {
            stop = true;
        }
    });
    EXPECT_EQ(seen, 4U);
    EXPECT_EQ(sampler.ticks(), 4U);
}

/// A simulated clock whose `jump_at`-th sleep overshoots its deadline by `jump` (a suspended
/// process or a paused VM).
class JumpingClock final : public Clock {
  public:
    JumpingClock(TimeUs start, int jump_at, DurationUs jump)
        : m_start(start), m_jump_at(jump_at), m_jump(jump) {}
    TimeUs wall_now() override { return m_start + m_mono; }
    std::int64_t mono_now() override { return m_mono; }
    void sleep_until(std::int64_t deadline, const std::atomic<bool>&) override {
        m_mono = std::max(m_mono, deadline);
        if (++m_sleeps == m_jump_at) {
            m_mono += m_jump;
        }
    }

  private:
    TimeUs m_start;
    int m_jump_at;
    DurationUs m_jump;
    std::int64_t m_mono = 0;
    int m_sleeps = 0;
};

TEST(Sampler, NoCatchUpBurstWhenTheClockJumps) {
    const DurationUs interval = k_s;
    JumpingClock clock(k_start, 3, 3 * interval);
    const auto source = telemetry::make_synthetic_source("classic", k_start, interval, 1);
    const Recorded r = run_sampler(clock, *source, interval, 6);
    ASSERT_EQ(r.ticks.size(), 6U);
    ASSERT_EQ(r.overruns.size(), 1U);
    EXPECT_EQ(r.overruns[0], 3 * interval);
    // Ticks 0–1 are regular; tick 2 absorbs the jump; the schedule then restarts from "now".
    EXPECT_EQ(r.ticks[1].t0, k_start + interval);
    EXPECT_EQ(r.ticks[2].t0, k_start + 2 * interval);
    EXPECT_EQ(r.ticks[2].duration_us, 4 * interval);
    for (std::size_t i = 3; i < r.ticks.size(); ++i) {
        EXPECT_EQ(r.ticks[i].t0, k_start + static_cast<TimeUs>(i + 3) * interval) << i;
        EXPECT_EQ(r.ticks[i].duration_us, interval) << i;
    }
    expect_contiguous(r.ticks);
    EXPECT_EQ(clock.wall_now(), k_start + 9 * interval);
}

/// A simulated clock whose wall time runs `ppm` parts per million slower than its monotonic time
/// (NTP slewing), and a few µs off at random at each read; `step` is added to the wall clock from
/// the `step_at`-th sleep on.
class SkewedClock final : public Clock {
  public:
    SkewedClock(TimeUs start, std::int64_t ppm, int step_at = 0, DurationUs step = 0)
        : m_start(start), m_ppm(ppm), m_step_at(step_at), m_step(step) {}
    TimeUs wall_now() override {
        m_reads = (m_reads * 1103515245 + 12345) % 2147483648;
        return m_start + m_mono - m_mono * m_ppm / 1000000 + (m_reads % 7) +
               (m_sleeps >= m_step_at && m_step_at > 0 ? m_step : 0);
    }
    std::int64_t mono_now() override { return m_mono; }
    void sleep_until(std::int64_t deadline, const std::atomic<bool>&) override {
        m_mono = std::max(m_mono, deadline) + 3;
        ++m_sleeps;
    }

  private:
    TimeUs m_start;
    std::int64_t m_ppm;
    int m_step_at;
    DurationUs m_step;
    std::int64_t m_mono = 0;
    std::int64_t m_reads = 1;
    int m_sleeps = 0;
};

// One daemon's ticks never overlap one another (nor leave gaps) when the wall clock jitters or is
// slewed against the monotonic clock; a real step of the wall clock is bridged by the next tick,
// its time unmeasured.
TEST(Sampler, JitterOfTheWallClockNeitherOverlapsNorGaps) {
    for (const DurationUs interval : {k_s, 30 * k_s}) {
        // Reads a few µs apart: contiguous.
        SkewedClock jittery(k_start, 0);
        const auto source = telemetry::make_synthetic_source("classic", k_start, interval, 1);
        const Recorded r = run_sampler(jittery, *source, interval, 20);
        ASSERT_EQ(r.ticks.size(), 20U);
        for (std::size_t i = 1; i < r.ticks.size(); ++i) {
            EXPECT_EQ(r.ticks[i].t0, r.ticks[i - 1].t0 + r.ticks[i - 1].duration_us) << i;
        }
        // Slewed by 400 ppm (NTP's most is 500): any overlap stays within what the report takes
        // as jitter.
        SkewedClock slewed(k_start, 400);
        const auto again = telemetry::make_synthetic_source("classic", k_start, interval, 1);
        const Recorded s = run_sampler(slewed, *again, interval, 40);
        for (std::size_t i = 1; i < s.ticks.size(); ++i) {
            const TimeUs end = s.ticks[i - 1].t0 + s.ticks[i - 1].duration_us;
            EXPECT_LE(end - s.ticks[i].t0, audit::overlap_jitter_us(s.ticks[i].duration_us)) << i;
        }
    }
    SkewedClock stepped(k_start, 0, 8, 60 * k_s);
    const auto source = telemetry::make_synthetic_source("classic", k_start, k_s, 1);
    const Recorded r = run_sampler(stepped, *source, k_s, 12);
    ASSERT_EQ(r.ticks.size(), 12U);
    int stretched = 0;
    for (std::size_t i = 1; i < r.ticks.size(); ++i) {
        const TimeUs end = r.ticks[i - 1].t0 + r.ticks[i - 1].duration_us;
        EXPECT_EQ(r.ticks[i].t0, end) << i;
        if (r.ticks[i].duration_us >= 60 * k_s) {
            ++stretched;
            for (const telemetry::CardTickRecord& c : r.ticks[i].cards) {
                EXPECT_GE(c.unmeasured_us, 60 * k_s - k_us_per_ms)
                    << "the step's minute is unmeasured";
            }
        }
    }
    EXPECT_EQ(stretched, 1) << "a 60 s step is not jitter: one tick bridges it";
}

/// Wraps a source; its `stall_at`-th poll (counting the priming poll as 1) takes `stall` of
/// simulated time, as a driver call that hangs would.
class StallingSource final : public telemetry::DeviceSource {
  public:
    StallingSource(std::unique_ptr<telemetry::DeviceSource> inner, SimulatedClock& clock,
                   int stall_at, DurationUs stall)
        : m_inner(std::move(inner)), m_clock(clock), m_stall_at(stall_at), m_stall(stall) {}
    std::string driver_version() override { return m_inner->driver_version(); }
    std::vector<telemetry::DeviceInfo> devices() override { return m_inner->devices(); }
    std::vector<telemetry::DevicePoll> poll(TimeUs now) override {
        std::vector<telemetry::DevicePoll> polls = m_inner->poll(now);
        if (++m_polls == m_stall_at) {
            m_clock.advance(m_stall);
        }
        return polls;
    }

  private:
    std::unique_ptr<telemetry::DeviceSource> m_inner;
    SimulatedClock& m_clock;
    int m_stall_at;
    DurationUs m_stall;
    int m_polls = 0;
};

TEST(Sampler, NoCatchUpBurstWhenAPollStalls) {
    // The poll that ends tick 1 takes 3 intervals: the sampler reports the overrun once and
    // restarts its schedule from "now" instead of delivering three catch-up ticks.
    const DurationUs interval = k_s;
    SimulatedClock clock(k_start);
    StallingSource source(telemetry::make_synthetic_source("classic", k_start, interval, 1), clock,
                          3, 3 * interval);
    const Recorded r = run_sampler(clock, source, interval, 6);
    ASSERT_EQ(r.ticks.size(), 6U);
    ASSERT_EQ(r.overruns.size(), 1U);
    EXPECT_EQ(r.overruns[0], 3 * interval);
    EXPECT_EQ(r.ticks[0].t0, k_start);
    EXPECT_EQ(r.ticks[1].t0, k_start + interval);
    // The stall ended at 5 s; the schedule restarts from there, so the tick after the stalled
    // one starts at 6 s and the rest follow one interval apart. (Where tick 2 starts is
    // TicksStayContiguousAfterAStall's business.)
    EXPECT_EQ(r.ticks[3].t0, k_start + 6 * interval);
    for (std::size_t i = 3; i + 1 < r.ticks.size(); ++i) {
        EXPECT_EQ(r.ticks[i + 1].t0 - r.ticks[i].t0, interval) << i;
    }
    for (const telemetry::Tick& t : r.ticks) {
        EXPECT_GE(t.duration_us, interval) << t.seq;
    }
    EXPECT_EQ(clock.wall_now(), k_start + 9 * interval);
}

/// Checks that consecutive ticks' [t0, t0 + duration) spans neither overlap nor leave holes.
void expect_contiguous(const std::vector<telemetry::Tick>& ticks) {
    for (std::size_t i = 0; i + 1 < ticks.size(); ++i) {
        EXPECT_EQ(ticks[i].t0 + ticks[i].duration_us, ticks[i + 1].t0)
            << "tick " << i << " [" << ticks[i].t0 - k_start << ", "
            << ticks[i].t0 + ticks[i].duration_us - k_start << ") µs vs tick " << i + 1
            << " starting at " << ticks[i + 1].t0 - k_start << " µs";
    }
}

TEST(Sampler, TicksStayContiguousAfterAStall) {
    // A tick covers the polls folded into it: from the previous tick's last poll to its own. A
    // stall in a poll or in the tick consumer (a slow database write) must not shift t0 away from
    // the data, or a tick's span overlaps the next one and the same time is counted twice.
    const DurationUs interval = k_s;
    {
        SimulatedClock clock(k_start);
        StallingSource source(telemetry::make_synthetic_source("classic", k_start, interval, 1),
                              clock, 3, 3 * interval);
        const Recorded r = run_sampler(clock, source, interval, 6);
        SCOPED_TRACE("stalling poll");
        expect_contiguous(r.ticks);
    }
    {
        SimulatedClock clock(k_start);
        const auto source = telemetry::make_synthetic_source("classic", k_start, interval, 1);
        const Recorded r = run_sampler(clock, *source, interval, 6, [&](const telemetry::Tick& t) {
            if (t.seq == 1) {
                clock.advance(3 * interval);
            }
        });
        ASSERT_EQ(r.overruns.size(), 1U);
        SCOPED_TRACE("slow tick consumer");
        expect_contiguous(r.ticks);
        const telemetry::Tick& last = r.ticks.back();
        EXPECT_EQ(last.t0 + last.duration_us, clock.wall_now());
    }
}

/// A source that asks for polls every `span` and records the wall time of each poll.
class ShortSpanSource final : public telemetry::DeviceSource {
  public:
    ShortSpanSource(std::unique_ptr<telemetry::DeviceSource> inner, DurationUs span)
        : m_inner(std::move(inner)), m_span(span) {}
    std::string driver_version() override { return m_inner->driver_version(); }
    std::vector<telemetry::DeviceInfo> devices() override { return m_inner->devices(); }
    std::vector<telemetry::DevicePoll> poll(TimeUs now) override {
        polls.push_back(now);
        if (m_clock != nullptr && polls.size() == m_stall_at) {
            m_clock->advance(m_stall);
        }
        return m_inner->poll(now);
    }
    DurationUs max_poll_span_us() const override { return m_span; }
    void set_span(DurationUs span) { m_span = span; }
    /// The `at`-th poll (the priming poll is the first) takes `stall` of simulated time.
    void stall(SimulatedClock& clock, std::size_t at, DurationUs stall) {
        m_clock = &clock;
        m_stall_at = at;
        m_stall = stall;
    }
    std::vector<TimeUs> polls;

  private:
    std::unique_ptr<telemetry::DeviceSource> m_inner;
    DurationUs m_span;
    SimulatedClock* m_clock = nullptr;
    std::size_t m_stall_at = 0;
    DurationUs m_stall = 0;
};

TEST(Sampler, AStalledPollWithinATickIsFollowedByOnePollNotABurst) {
    const DurationUs interval = 10 * k_s;
    SimulatedClock clock(k_start);
    ShortSpanSource source(telemetry::make_synthetic_source("classic", k_start, interval, 1), k_s);
    source.stall(clock, 4, 3500 * k_us_per_ms); // the poll at 3 s ends at 6.5 s
    const Recorded r = run_sampler(clock, source, interval, 2);
    ASSERT_EQ(r.ticks.size(), 2U);
    EXPECT_TRUE(r.overruns.empty());
    EXPECT_EQ(r.ticks[0].duration_us, interval);
    EXPECT_EQ(r.ticks[1].t0, k_start + interval);
    // Polls at 1, 2, 3 s; then one poll at once (6.5 s), then evenly (≤ 1 s apart) up to 10 s.
    const std::vector<TimeUs>& p = source.polls;
    ASSERT_GE(p.size(), 9U);
    EXPECT_EQ(p[3], k_start + 3 * k_s);
    EXPECT_EQ(p[4], k_start + 6500 * k_us_per_ms);
    for (std::size_t i = 5; i < p.size(); ++i) {
        EXPECT_GE(p[i] - p[i - 1], 700 * k_us_per_ms) << i; // no catch-up burst
        EXPECT_LE(p[i] - p[i - 1], k_s) << i;
    }
    EXPECT_TRUE(std::find(p.begin(), p.end(), k_start + interval) != p.end());
}

TEST(Sampler, PollsAsOftenAsTheSourceAffordsWithExactTickBounds) {
    const DurationUs interval = 30 * k_s;
    const DurationUs span = 700 * k_us_per_ms; // 30 s is no whole number of 0.7 s steps
    SimulatedClock clock(k_start);
    ShortSpanSource source(telemetry::make_synthetic_source("classic", k_start, interval, 1), span);
    const Recorded r = run_sampler(clock, source, interval, 3, [&](const telemetry::Tick& t) {
        if (t.seq == 1) {
            source.set_span(2 * k_s); // the ring proved longer: fewer polls from now on
        }
    });
    ASSERT_EQ(r.ticks.size(), 3U);
    expect_contiguous(r.ticks);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(r.ticks[i].t0, k_start + static_cast<TimeUs>(i) * interval);
        EXPECT_EQ(r.ticks[i].duration_us, interval);
    }
    const auto polls_in = [&](std::size_t tick) {
        const TimeUs from = r.ticks[tick].t0;
        const TimeUs to = from + r.ticks[tick].duration_us;
        return std::count_if(source.polls.begin(), source.polls.end(),
                             [&](TimeUs t) { return t > from && t <= to; });
    };
    EXPECT_EQ(polls_in(0), (interval + span - 1) / span); // 43 polls of 0.6977 s
    EXPECT_EQ(polls_in(1), (interval + span - 1) / span);
    EXPECT_EQ(polls_in(2), 15);
    for (std::size_t i = 1; i < source.polls.size(); ++i) {
        EXPECT_LE(source.polls[i] - source.polls[i - 1], i <= 86 ? span : 2 * k_s) << i;
        EXPECT_GT(source.polls[i] - source.polls[i - 1], 0) << i;
    }
}

/// Simulated time that also drives the fake driver's clock file (scenario time = `offset_s` +
/// monotonic seconds).
class FakeDriverClock final : public Clock {
  public:
    FakeDriverClock(TimeUs start, const nvml::testing::FakeDriver& fake, double offset_s)
        : m_sim(start), m_fake(fake), m_offset_s(offset_s) {
        m_fake.set_time(m_offset_s);
    }
    TimeUs wall_now() override { return m_sim.wall_now(); }
    std::int64_t mono_now() override { return m_sim.mono_now(); }
    void sleep_until(std::int64_t deadline, const std::atomic<bool>& stop) override {
        m_sim.sleep_until(deadline, stop);
        m_fake.set_time(m_offset_s + static_cast<double>(m_sim.mono_now()) / 1e6);
    }

  private:
    SimulatedClock m_sim;
    const nvml::testing::FakeDriver& m_fake;
    double m_offset_s;
};

TEST(Sampler, AShortDriverRingLosesNothingAtThirtySecondTicks) {
    // 6 ring entries at 0.1 s hold 0.6 s of history: 5 s polls would lose 88 % of every span.
    // Busy 0.3 s of every second, on the ring's period grid.
    nlohmann::json util = nlohmann::json::array();
    for (int s = 0; s < 200; ++s) {
        util.push_back({s, 100});
        util.push_back({s + 0.3, 0});
    }
    const nlohmann::json device = {
        {"uuid", "GPU-0"}, {"ring_size", 6}, {"util_period_s", 0.1}, {"util", util}};
    const nvml::testing::FakeDriver fake(nlohmann::json{{"devices", {device}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    constexpr double k_offset_s = 10; // the daemon starts on a running driver: the ring is full
    FakeDriverClock clock(k_start, fake, k_offset_s);
    const Recorded r = run_sampler(clock, *source, 30 * k_s, 2);
    ASSERT_EQ(r.ticks.size(), 2U);
    for (const telemetry::Tick& t : r.ticks) {
        ASSERT_EQ(t.cards.size(), 1U);
        const telemetry::CardTickRecord& card = t.cards[0];
        EXPECT_EQ(card.util_source, telemetry::UtilSource::samples);
        EXPECT_EQ(card.unmeasured_us, 0);
        // Truth: 0.3 s active in every whole second of the tick.
        const double seconds = static_cast<double>(t.duration_us) / 1e6;
        ASSERT_TRUE(card.active_us.has_value());
        EXPECT_NEAR(static_cast<double>(*card.active_us) / 1e6, 0.3 * seconds, 0.01 * seconds);
    }
    EXPECT_EQ(source->diagnostics().lost_sample_batches, 0);
    EXPECT_EQ(source->max_poll_span_us(), 300 * k_us_per_ms);
}

} // namespace sampler_test
} // namespace gua::sampler
