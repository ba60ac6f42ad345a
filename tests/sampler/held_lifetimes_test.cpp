// SPDX-License-Identifier: Apache-2.0
// Ground truth at the sampler for holders that start or exit inside a poll span: the fake driver
// (through the real loader and NvmlSource) lists a 20 GiB holder on an idle card from its start
// (a fake /proc start time on the clock's boot timeline) or until a real child process is killed
// at a simulated instant (its pidfd, through the sampler's exit checks between polls). The
// idle-held time follows the instant, not the edge of the poll span the change fell in.
#include "identity/child_process.hpp"
#include "identity/fake_proc.hpp"
#include "identity/resolver.hpp"
#include "nvml/fake_driver.hpp"
#include "sampler/sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace gua::sampler {
namespace held_lifetimes_test { // named after the file: unique in a unity batch

using nlohmann::json;

constexpr TimeUs k_start = 1767607200LL * k_us_per_second;
constexpr double k_offset = 600; ///< scenario time of the first poll (the rings are full)
constexpr std::int64_t k_boot = 5000 * k_us_per_second; ///< boot time at monotonic 0
const char* const k_uuid = "GPU-11fe0000-0000-0000-0000-000000000000";

/// Simulated time that drives the fake driver's clock file, with a boot timeline, and runs
/// `at_event` once when it passes `event_us` (monotonic).
class LifetimeClock final : public Clock {
  public:
    LifetimeClock(const nvml::testing::FakeDriver& fake, std::int64_t event_us,
                  std::function<void()> at_event)
        : m_sim(k_start), m_fake(fake), m_event_us(event_us), m_at_event(std::move(at_event)) {
        m_fake.set_time(k_offset);
    }
    TimeUs wall_now() override { return m_sim.wall_now(); }
    std::int64_t mono_now() override { return m_sim.mono_now(); }
    std::optional<std::int64_t> boot_now() override { return k_boot + m_sim.mono_now(); }
    void sleep_until(std::int64_t deadline, const std::atomic<bool>& stop) override {
        if (m_at_event && m_sim.mono_now() < m_event_us && m_event_us <= deadline) {
            move_to(m_event_us, stop);
            m_at_event();
            m_at_event = nullptr;
        }
        move_to(deadline, stop);
    }

  private:
    void move_to(std::int64_t mono, const std::atomic<bool>& stop) {
        m_sim.sleep_until(mono, stop);
        m_fake.set_time(k_offset + static_cast<double>(m_sim.mono_now()) / 1e6);
    }
    SimulatedClock m_sim;
    const nvml::testing::FakeDriver& m_fake;
    std::int64_t m_event_us;
    std::function<void()> m_at_event;
};

struct Held {
    DurationUs held = 0;
    DurationUs unlisted = 0;
};

/// Runs two 30 s ticks; returns the first tick's idle-held and truly idle time.
Held first_tick(const json& scenario, identity::Resolver& resolver, std::int64_t event_us,
                const std::function<void()>& at_event) {
    const nvml::testing::FakeDriver fake(scenario);
    auto source = fake.source();
    if (!source) {
        ADD_FAILURE() << "the fake driver did not open";
        return {};
    }
    LifetimeClock clock(fake, event_us, at_event);
    SamplerOptions options;
    options.interval_us = 30 * k_us_per_second;
    options.max_ticks = 2;
    Sampler sampler(*source, clock, resolver, options);
    const std::atomic<bool> stop{false};
    std::vector<telemetry::Tick> ticks;
    sampler.run(stop, [&](const telemetry::Tick& t) { ticks.push_back(t); });
    if (ticks.size() != 2U || ticks[0].cards.size() != 1U) {
        ADD_FAILURE() << "expected two ticks of one card";
        return {};
    }
    const telemetry::CardTickRecord& c = ticks[0].cards[0];
    EXPECT_EQ(c.unmeasured_us, 0);
    EXPECT_EQ(c.active_us, 0);
    return {ticks[0].duration_us - c.idle_unlisted_us - c.idle_unknown_us, c.idle_unlisted_us};
}

json idle_card(const json& process) {
    return {{"devices", json::array({{{"uuid", k_uuid}, {"util", json::array({{0.0, 0}})}}})},
            {"processes", json::array({process})}};
}

TEST(HeldLifetimes, AHolderStartingInsideAPollHoldsFromItsStart) {
    // Starts 12.3 s into the tick (its /proc start time says so; the driver lists it from then).
    constexpr std::int64_t k_started = 12'300'000;
    identity::testing::FakeProc proc;
    ASSERT_FALSE(proc.root().empty());
    identity::testing::FakeProcess p;
    p.uid = "61020";
    const auto per_s = ::sysconf(_SC_CLK_TCK);
    p.start_ticks = static_cast<std::uint64_t>((k_boot + k_started) * per_s / k_us_per_second);
    proc.write(7001, p);
    identity::Resolver resolver{proc.root()};
    const json scenario = idle_card({{"device", 0},
                                     {"pid", 7001},
                                     {"start", k_offset + static_cast<double>(k_started) / 1e6},
                                     {"memory_mib", json::array({{0.0, 20480}})}});
    const Held h = first_tick(scenario, resolver, 0, nullptr);
    EXPECT_NEAR(static_cast<double>(h.held), 30e6 - static_cast<double>(k_started), 20'000)
        << "idle-held from its start (the edge of its poll span would give 15 s)";
    EXPECT_NEAR(static_cast<double>(h.unlisted), static_cast<double>(k_started), 20'000);
}

TEST(HeldLifetimes, AHolderExitingInsideAPollHoldsUntilItsExit) {
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0));
    if (pidfd < 0) {
        GTEST_SKIP() << "no pidfds here: exits are placed at the poll that misses the process";
    }
    ::close(pidfd);
    // A real process listed by the driver while it runs, killed 12.3 s into the tick.
    constexpr std::int64_t k_killed = 12'300'000;
    identity::testing::ChildProcess child({"/usr/bin/sleep", "1000"});
    ASSERT_GT(child.pid(), 0);
    ASSERT_TRUE(child.wait_for_comm("sleep"));
    identity::Resolver resolver{"/proc"};
    const json scenario = idle_card({{"device", 0},
                                     {"pid", child.pid()},
                                     {"until_exit", true},
                                     {"memory_mib", json::array({{0.0, 20480}})}});
    const Held h = first_tick(scenario, resolver, k_killed, [&] { child.stop(); });
    // The exit is placed at the middle of the 250 ms check that saw it.
    EXPECT_NEAR(static_cast<double>(h.held), static_cast<double>(k_killed),
                static_cast<double>(Sampler::k_exit_check_us) / 2 + 1000)
        << "idle-held until its exit (the edge of its poll span would give 10 s)";
}

} // namespace held_lifetimes_test
} // namespace gua::sampler
