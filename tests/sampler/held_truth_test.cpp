// SPDX-License-Identifier: Apache-2.0
// Ground truth at the sampler: the fake driver (through the real loader and NvmlSource) plays
// holders that come and go within a tick — a short holder, memory around the held threshold,
// holders taking turns, a job that ends early, an MPS server next to its client — and the
// sampler's card-ticks, classified and attributed as the report does, are held to the scenario's
// truth integrated over the same spans (tests/support/ground_truth.hpp) at 1 s and 30 s ticks.
#include "audit/attribute.hpp"
#include "audit/from_tick.hpp"
#include "identity/fake_proc.hpp"
#include "identity/resolver.hpp"
#include "nvml/fake_driver.hpp"
#include "sampler/sampler.hpp"
#include "support/ground_truth.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

namespace gua::sampler {
namespace held_truth_test { // named after the file: unique in a unity batch

using nlohmann::json;

constexpr TimeUs k_start = 1767607200LL * k_us_per_second;
constexpr double k_offset = 600; ///< scenario time of the first poll (the rings are full)
constexpr double k_period = 30;  ///< every pattern repeats every 30 s of scenario time
constexpr double k_late = 0.05;  ///< how long after a poll a change happens
constexpr std::uint32_t k_pid_a = 4001;
constexpr std::uint32_t k_pid_b = 4002;
const char* const k_uuid = "GPU-7e570000-0000-0000-0000-000000000000";

/// Simulated time that also drives the fake driver's clock file.
class TruthClock final : public Clock {
  public:
    /// `step_us` is added to the wall clock (only) from the `step_at`-th sleep on.
    explicit TruthClock(const nvml::testing::FakeDriver& fake, int step_at = 0,
                        DurationUs step_us = 0)
        : m_sim(k_start), m_fake(fake), m_step_at(step_at), m_step_us(step_us) {
        m_fake.set_time(k_offset);
    }
    TimeUs wall_now() override {
        return m_sim.wall_now() + (m_step_at > 0 && m_sleeps >= m_step_at ? m_step_us : 0);
    }
    std::int64_t mono_now() override { return m_sim.mono_now(); }
    void sleep_until(std::int64_t deadline, const std::atomic<bool>& stop) override {
        m_sim.sleep_until(deadline, stop);
        m_fake.set_time(k_offset + static_cast<double>(m_sim.mono_now()) / 1e6);
        ++m_sleeps;
    }

  private:
    SimulatedClock m_sim;
    const nvml::testing::FakeDriver& m_fake;
    int m_step_at = 0;
    DurationUs m_step_us = 0;
    int m_sleeps = 0;
};

json steady(double value) {
    return json::array({json::array({0.0, value})});
}

json proc(std::uint32_t pid, const std::string& who, const json& memory, double start = 0,
          double end = 1e6, const std::string& type = "compute", const json& sm = steady(0)) {
    return {{"device", 0},    {"pid", pid}, {"who", who},           {"type", type},
            {"start", start}, {"end", end}, {"memory_mib", memory}, {"sm_util", sm}};
}

/// Processes alive on [from, to) of every period.
json windows(std::uint32_t pid, const std::string& who, double mib, double from, double to,
             const std::string& type = "compute", const json& sm = steady(0)) {
    json out = json::array();
    for (double p = k_offset - k_period; p < k_offset + 1300; p += k_period) {
        out.push_back(proc(pid, who, steady(mib), p + from, p + to, type, sm));
    }
    return out;
}

json concat(json a, const json& b) {
    for (const json& x : b) {
        a.push_back(x);
    }
    return a;
}

class HeldTruth : public ::testing::TestWithParam<double> {
  protected:
    identity::testing::FakeProc m_proc;
    std::string a() const { return "uid:61001"; }
    std::string b() const { return "uid:61002"; }

    /// Runs `processes` on one card with `util` and checks states and identities; `device` adds
    /// fields to the card, `faults` are the scenario's.
    void check(const json& processes, const json& util, const std::string& name,
               const json& device = json::object(), const json& faults = json::array()) {
        ASSERT_FALSE(m_proc.root().empty());
        identity::testing::FakeProcess pa;
        pa.uid = "61001";
        pa.start_ticks = 1000;
        identity::testing::FakeProcess pb = pa;
        pb.uid = "61002";
        m_proc.write(k_pid_a, pa);
        m_proc.write(k_pid_b, pb);
        json card = {{"uuid", k_uuid}, {"util", util}};
        card.update(device);
        const json scenario = {
            {"devices", json::array({card})}, {"processes", processes}, {"faults", faults}};
        const nvml::testing::FakeDriver fake(test::fake_scenario(scenario));
        auto source = fake.source();
        ASSERT_TRUE(source);
        TruthClock clock(fake);
        identity::Resolver resolver{m_proc.root()};
        SamplerOptions options;
        options.interval_us = std::llround(GetParam() * 1e6);
        options.max_ticks = GetParam() >= 30 ? 20 : 60;
        Sampler sampler(*source, clock, resolver, options);
        const std::atomic<bool> stop{false};
        audit::StateTimes gua;
        std::map<std::string, double> gua_identity;
        std::vector<test::Span> spans;
        audit::Thresholds th;
        sampler.run(stop, [&](const telemetry::Tick& tick) {
            for (const telemetry::CardTickRecord& c : tick.cards) {
                audit::CardTick ct = audit::to_card_tick(tick, c);
                for (std::size_t i = 0; i < ct.processes.size(); ++i) {
                    ct.processes[i].identity = static_cast<std::uint32_t>(i + 1);
                }
                const audit::StateTimes states = audit::classify(ct, th);
                gua += states;
                std::vector<audit::IdentityShareUs> shares;
                audit::attribute_us(ct, states, th, 0, shares);
                for (const audit::IdentityShareUs& s : shares) {
                    const std::string who = s.identity == 0
                                                ? "(no process)"
                                                : c.processes[s.identity - 1].identity.user;
                    gua_identity[who] += static_cast<double>(s.active_us + s.idle_held_us) / 1e6;
                }
            }
            const double from = k_offset + static_cast<double>(tick.t0 - k_start) / 1e6;
            spans.push_back({from, from + static_cast<double>(tick.duration_us) / 1e6});
        });
        const test::CardTruth truth = test::GroundTruth(scenario).integrate(k_uuid, spans);
        const double rec = truth.recorded_s;
        const double flagged = static_cast<double>(gua.unmeasured) / 1e6;
        const double allowed = 0.01 * rec + flagged + 1e-6;
        const auto s = [](DurationUs us) { return static_cast<double>(us) / 1e6; };
        EXPECT_NEAR(s(gua.total()), rec, 1e-3);
        EXPECT_NEAR(s(gua.active), truth.active_s, allowed) << name;
        EXPECT_NEAR(s(gua.idle_held), truth.idle_held_s, allowed) << name;
        EXPECT_NEAR(s(gua.truly_idle), truth.truly_idle_s, allowed) << name;
        std::map<std::string, bool> names;
        for (const auto& [who, x] : truth.identity_s) {
            names[who] = true;
        }
        for (const auto& [who, x] : gua_identity) {
            names[who] = true;
        }
        std::string lines;
        for (const auto& [who, unused] : names) {
            const double want = truth.identity_s.contains(who) ? truth.identity_s.at(who) : 0.0;
            const double got = gua_identity.contains(who) ? gua_identity.at(who) : 0.0;
            EXPECT_NEAR(got, want, allowed) << name << ": identity " << who;
            lines += fmt::format(" {} {:.2f}/{:.2f} s", who, got, want);
        }
        std::cout << fmt::format("[truth] {} {}s: active {:.2f}/{:.2f} idle-held {:.2f}/{:.2f} "
                                 "truly idle {:.2f}/{:.2f} s (gua/truth), flagged {:.2f} s;{}\n",
                                 name, GetParam(), s(gua.active), truth.active_s, s(gua.idle_held),
                                 truth.idle_held_s, s(gua.truly_idle), truth.truly_idle_s, flagged,
                                 lines);
    }
};

TEST_P(HeldTruth, AShortHolderExitingEarly) {
    check(windows(k_pid_a, a(), 20480, k_late, 10 + k_late), steady(0), "short holder");
}

TEST_P(HeldTruth, MemoryHoveringAroundTheThreshold) {
    json memory = json::array({json::array({0.0, 90})});
    for (double t = k_offset - k_period; t < k_offset + 1300; t += 15) {
        memory.push_back({t + k_late, 120});
        memory.push_back({t + 5 + k_late, 95});
        memory.push_back({t + 10 + k_late, 60});
    }
    check(json::array({proc(k_pid_a, a(), memory)}), steady(0), "hovering memory");
}

TEST_P(HeldTruth, HoldersTakingTurns) {
    check(concat(windows(k_pid_a, a(), 60, 2 * k_late, 15 + k_late),
                 windows(k_pid_b, b(), 60, 15 + 2 * k_late, 30 + k_late)),
          steady(0), "turns");
}

TEST_P(HeldTruth, AJobThatEndsEarly) {
    check(concat(windows(k_pid_a, a(), 8000, k_late, 5 + k_late),
                 json::array({proc(k_pid_b, b(), steady(8000))})),
          steady(0), "early end");
}

TEST_P(HeldTruth, MpsClientAndServer) {
    json busy = json::array({json::array({0.0, 0})});
    for (double p = k_offset - k_period; p < k_offset + 1300; p += k_period) {
        busy.push_back({p, 100});
        busy.push_back({p + 5, 0});
    }
    check(concat(windows(k_pid_a, a(), 6000, k_late, 10 + k_late, "compute", busy),
                 json::array({proc(k_pid_b, b(), steady(2000), 0, 1e6, "mps")})),
          busy, "MPS");
}

// The per-process utilization read fails for a minute while one user's process is busy and
// another's holds memory idle: that minute's active time is flagged, never split by memory (the
// idle holder was charged 75 % of it).
TEST_P(HeldTruth, AFailedPerProcessUtilizationRead) {
    json busy = json::array({json::array({0.0, 0})});
    for (double p = k_offset - k_period; p < k_offset + 1300; p += k_period) {
        busy.push_back({p + k_late, 100});
        busy.push_back({p + 20 + k_late, 0});
    }
    const json faults = json::array({{{"function", "nvmlDeviceGetProcessUtilization"},
                                      {"from", k_offset + 30},
                                      {"to", k_offset + 90},
                                      {"error", 999}}});
    check(json::array({proc(k_pid_a, a(), steady(1000), 0, 1e6, "compute", busy),
                       proc(k_pid_b, b(), steady(3000))}),
          busy, "per-process read failed", json::object(), faults);
}

// The compute-process list keeps growing between the size query and the data calls (every data
// call answers INSUFFICIENT_SIZE) for the first polls: those polls' holders are unknown,
// flagged, never "(no process)".
TEST_P(HeldTruth, AProcessListThatKeepsGrowing) {
    json busy = json::array({json::array({0.0, 0})});
    for (double p = k_offset - k_period; p < k_offset + 1300; p += k_period) {
        busy.push_back({p + k_late, 100});
        busy.push_back({p + 20 + k_late, 0});
    }
    check(json::array({proc(k_pid_a, a(), steady(8000), 0, 1e6, "compute", busy)}), busy,
          "list keeps growing", {{"process_list_growth", {{"extra", 10}, {"calls", 60}}}});
}

// The wall clock stepped 60 s forward or back (NTP, an administrator) while the card is busy all
// the time, ring timestamps in the epoch and in the boot-time domain: the card stays busy (poll
// spans follow the monotonic clock; it read 0 % after the step when they followed the wall
// clock), and the ticks stay contiguous and on the wall clock: a forward step's minute is
// unmeasured at the start of the next tick, a backward step's minute, lived twice, is recorded
// once (neither a gap nor an overlap).
TEST(HeldTruthClock, AWallClockStepIsUnmeasuredNeverAGapOrAnOverlap) {
    for (const DurationUs step : {60 * k_us_per_second, -60 * k_us_per_second}) {
        for (const char* domain : {"epoch", "boot"}) {
            const std::string name =
                fmt::format("{} s step, {} timestamps", step / 1'000'000, domain);
            const json scenario = {{"devices", json::array({{{"uuid", k_uuid},
                                                             {"util", steady(100)},
                                                             {"timestamp_domain", domain}}})}};
            const nvml::testing::FakeDriver fake(scenario);
            auto source = fake.source();
            ASSERT_TRUE(source);
            TruthClock clock(fake, 8, step);
            identity::Resolver resolver{"/nonexistent-proc"};
            SamplerOptions options;
            options.interval_us = 30 * k_us_per_second;
            options.max_ticks = 8;
            Sampler sampler(*source, clock, resolver, options);
            const std::atomic<bool> stop{false};
            std::vector<telemetry::Tick> ticks;
            sampler.run(stop, [&](const telemetry::Tick& t) { ticks.push_back(t); });
            ASSERT_EQ(ticks.size(), 8U) << name;
            DurationUs unmeasured = 0;
            DurationUs recorded = 0;
            for (std::size_t i = 0; i < ticks.size(); ++i) {
                const telemetry::CardTickRecord& c = ticks[i].cards.at(0);
                EXPECT_GE(c.active_us.value_or(0),
                          (ticks[i].duration_us - c.unmeasured_us) * 99 / 100)
                    << name << ", tick " << i;
                if (i > 0) {
                    EXPECT_EQ(ticks[i].t0, ticks[i - 1].t0 + ticks[i - 1].duration_us)
                        << name << ": tick " << i << " follows the previous one";
                }
                unmeasured += c.unmeasured_us;
                recorded += ticks[i].duration_us;
            }
            // The ticks end on the wall clock as it reads after the step.
            EXPECT_EQ(ticks.back().t0 + ticks.back().duration_us, clock.wall_now()) << name;
            if (step > 0) {
                EXPECT_EQ(unmeasured, step) << name << ": the skipped minute, unmeasured";
                EXPECT_EQ(recorded, clock.mono_now() + step) << name;
            } else {
                EXPECT_EQ(unmeasured, 0) << name;
                EXPECT_EQ(recorded, clock.mono_now() + step) << name << ": the minute once";
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Intervals, HeldTruth, ::testing::Values(1.0, 30.0),
                         [](const ::testing::TestParamInfo<double>& p) {
                             return fmt::format("Every{}s", p.param);
                         });

} // namespace held_truth_test
} // namespace gua::sampler
