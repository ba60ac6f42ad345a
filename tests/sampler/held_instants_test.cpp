// SPDX-License-Identifier: Apache-2.0
// The fold at sub-poll resolution: a holder that starts (its /proc start time) or exits (the
// sampler's exit check) inside a poll span holds the card only for the part of the span it was
// alive; a failed per-process utilization read and an identity the resolver's budget deferred
// leave their part of the poll attributed to no one (flagged), never split by memory.
#include "audit/attribute.hpp"
#include "audit/from_tick.hpp"
#include "identity/fake_proc.hpp"
#include "identity/node_tree.hpp"
#include "identity/resolver.hpp"
#include "sampler/fold.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace gua::sampler {
namespace held_instants_test { // named after the file: unique in a unity batch

constexpr TimeUs k_t0 = 1767607200LL * k_us_per_second;
constexpr DurationUs k_poll = 5 * k_us_per_second;
/// Boot time − monotonic time in these tests: places the fake /proc start times.
constexpr std::int64_t k_boot_offset = 1000 * k_us_per_second;

std::uint64_t ticks_at(std::int64_t mono_us) {
    const auto per_s = static_cast<std::uint64_t>(::sysconf(_SC_CLK_TCK));
    return static_cast<std::uint64_t>(mono_us + k_boot_offset) * per_s / 1'000'000;
}

telemetry::ProcessReading listed(std::uint32_t pid, std::int64_t mib, double sm = 0) {
    telemetry::ProcessReading r;
    r.pid = pid;
    r.mem_used_mib = mib;
    r.sm_util_pct = sm;
    return r;
}

telemetry::DevicePoll poll_of(double pct, std::vector<telemetry::ProcessReading> processes) {
    telemetry::DevicePoll d;
    d.uuid = "GPU-a";
    d.util_source = telemetry::UtilSource::samples;
    d.util = {{pct, 1}};
    d.processes = std::move(processes);
    return d;
}

class HeldInstants : public ::testing::Test {
  protected:
    identity::testing::FakeProc m_proc;
    const std::unordered_map<std::string, telemetry::DeviceInfo> m_devices{
        {"GPU-a", telemetry::DeviceInfo{"GPU-a", 0, "Card A", 81920, "", ""}}};

    void spawn(std::uint32_t pid, const std::string& uid, std::uint64_t start_ticks) const {
        identity::testing::FakeProcess p;
        p.uid = uid;
        p.start_ticks = start_ticks;
        m_proc.write(pid, p);
    }

    /// Folds six 5 s polls of one 30 s tick; `at(k)` gives poll k's reading (k = 1..6, ending
    /// at k × 5 s), `exits_at(k)` the exits seen before it.
    template <typename At, typename Exits>
    telemetry::Tick run(identity::Resolver& resolver, At at, Exits exits_at,
                        bool with_times = true) const {
        TickBuilder builder{audit::Thresholds{}, resolver};
        builder.start(k_t0);
        for (int k = 1; k <= 6; ++k) {
            const std::vector<ProcessExit> exits = exits_at(k);
            PollTimes times;
            times.end_mono_us = k * k_poll;
            if (with_times) {
                times.boot_offset_us = k_boot_offset;
                times.exits = exits;
            }
            builder.add_poll({at(k)}, k_poll, m_devices, times);
        }
        return builder.finish(0);
    }
};

audit::StateTimes states_of(const telemetry::Tick& tick) {
    return audit::classify(audit::to_card_tick(tick, tick.cards.at(0)), audit::Thresholds{});
}

DurationUs held_of(const telemetry::Tick& tick, std::uint32_t pid) {
    DurationUs sum = 0;
    for (const telemetry::ProcessTick& p : tick.cards.at(0).processes) {
        sum += p.pid == pid ? p.idle_held_us.value_or(0) : 0;
    }
    return sum;
}

const auto k_no_exits = [](int) { return std::vector<ProcessExit>{}; };

TEST_F(HeldInstants, AHolderHoldsFromItsStartInsideAPoll) {
    // Starts 12.5 s into an idle tick, listed from the poll at 15 s on: held 17.5 s, not 20 s.
    spawn(5001, "61001", ticks_at(12'500'000));
    identity::Resolver resolver{m_proc.root()};
    const auto at = [](int k) {
        return poll_of(0, k >= 3 ? std::vector{listed(5001, 20480)}
                                 : std::vector<telemetry::ProcessReading>{});
    };
    const audit::StateTimes s = states_of(run(resolver, at, k_no_exits));
    EXPECT_EQ(s.idle_held, 17'500'000);
    EXPECT_EQ(s.truly_idle, 12'500'000);
    // Without times the poll's list stands for its whole span, as before.
    const audit::StateTimes edge = states_of(run(resolver, at, k_no_exits, false));
    EXPECT_EQ(edge.idle_held, 20 * k_us_per_second);
}

TEST_F(HeldInstants, AHolderHoldsUntilItsExitInsideAPoll) {
    // Listed at 5 and 10 s, exits at 12 s (seen by the exit check), gone at 15 s: held 12 s.
    spawn(5002, "61002", ticks_at(-500 * k_us_per_second));
    identity::Resolver resolver{m_proc.root()};
    const auto at = [](int k) {
        return poll_of(0, k <= 2 ? std::vector{listed(5002, 20480)}
                                 : std::vector<telemetry::ProcessReading>{});
    };
    const auto exits = [](int k) {
        return k == 3 ? std::vector{ProcessExit{5002, ticks_at(-500 * k_us_per_second),
                                                12 * k_us_per_second}}
                      : std::vector<ProcessExit>{};
    };
    const telemetry::Tick tick = run(resolver, at, exits);
    const audit::StateTimes s = states_of(tick);
    EXPECT_EQ(s.idle_held, 12 * k_us_per_second);
    EXPECT_EQ(s.truly_idle, 18 * k_us_per_second);
    EXPECT_EQ(held_of(tick, 5002), 12 * k_us_per_second);
}

TEST_F(HeldInstants, HoldersTakingTurnsInsideAPollHoldTogetherOnlyWhileBothLive) {
    // A (80 MiB) exits at 12 s; B (80 MiB) starts at 11 s: together above 100 MiB for 1 s only,
    // each holding half of it.
    const std::uint64_t a_start = ticks_at(-500 * k_us_per_second);
    spawn(5003, "61003", a_start);
    spawn(5004, "61004", ticks_at(11 * k_us_per_second));
    identity::Resolver resolver{m_proc.root()};
    const auto at = [](int k) {
        return poll_of(0, k <= 2 ? std::vector{listed(5003, 80)} : std::vector{listed(5004, 80)});
    };
    const auto exits = [&](int k) {
        return k == 3 ? std::vector{ProcessExit{5003, a_start, 12 * k_us_per_second}}
                      : std::vector<ProcessExit>{};
    };
    const telemetry::Tick tick = run(resolver, at, exits);
    const audit::StateTimes s = states_of(tick);
    EXPECT_EQ(s.idle_held, k_us_per_second);
    EXPECT_EQ(s.truly_idle, 29 * k_us_per_second);
    EXPECT_EQ(held_of(tick, 5003), k_us_per_second / 2);
    EXPECT_EQ(held_of(tick, 5004), k_us_per_second / 2);
}

TEST_F(HeldInstants, AFailedPerProcessUtilizationReadLeavesItsActiveTimeToNoOne) {
    // The busy user's process and an idle holder; the per-process read fails at the polls at
    // 10 and 15 s: those 10 s of active time are flagged, never split by memory.
    spawn(5005, "61005", 100);
    spawn(5006, "61006", 100);
    identity::Resolver resolver{m_proc.root()};
    const auto at = [](int k) {
        telemetry::DevicePoll p = poll_of(100, {listed(5005, 1000, 100), listed(5006, 3000, 0)});
        if (k == 2 || k == 3) {
            p.process_util_unknown = true;
            for (telemetry::ProcessReading& r : p.processes) {
                r.sm_util_pct.reset();
            }
        }
        return p;
    };
    const telemetry::Tick tick = run(resolver, at, k_no_exits);
    const telemetry::CardTickRecord& card = tick.cards.at(0);
    const audit::StateTimes s = states_of(tick);
    EXPECT_EQ(s.active, 20 * k_us_per_second);
    EXPECT_EQ(s.unmeasured, 10 * k_us_per_second);
    EXPECT_EQ(card.idle_unknown_us, 10 * k_us_per_second);
    audit::CardTick ct = audit::to_card_tick(tick, card);
    for (std::size_t i = 0; i < ct.processes.size(); ++i) {
        ct.processes[i].identity = card.processes[i].pid;
    }
    std::vector<audit::IdentityShareUs> shares;
    audit::attribute_us(ct, s, audit::Thresholds{}, 0, shares);
    for (const audit::IdentityShareUs& x : shares) {
        EXPECT_EQ(x.active_us, x.identity == 5005 ? 20 * k_us_per_second : 0)
            << "identity " << x.identity;
    }
}

TEST(HeldInstantsBudget, IdentitiesTheBudgetDeferredAreFlaggedNotAttributed) {
    // Ten holders in Docker containers whose configs each take a while to parse: the resolver's
    // per-round budget names the first few; the others' idle-held time is no one's (flagged).
    identity::testing::NodeTree node;
    std::string big = R"({"Name":"/slow","Env":[)";
    while (big.size() < 3'500'000) {
        big += R"("AAAAAAAA",)";
    }
    big += R"("end"]})";
    identity::testing::FakeProc proc;
    std::vector<telemetry::ProcessReading> processes;
    for (std::uint32_t i = 0; i < 10; ++i) {
        const std::string id = std::string(63, 'c') + std::to_string(i);
        node.add_docker(id, big);
        identity::testing::FakeProcess p;
        p.uid = "61010";
        p.cgroup = "0::/system.slice/docker-" + id + ".scope\n";
        proc.write(6000 + i, p);
        processes.push_back(listed(6000 + i, 1000));
    }
    identity::Resolver resolver{proc.root(), identity::k_first_person_uid, 1'000'000, node.paths()};
    TickBuilder builder{audit::Thresholds{}, resolver};
    const std::unordered_map<std::string, telemetry::DeviceInfo> devices{
        {"GPU-a", telemetry::DeviceInfo{"GPU-a", 0, "Card A", 81920, "", ""}}};
    builder.start(k_t0);
    builder.add_poll({poll_of(0, processes)}, k_poll, devices);
    const telemetry::Tick tick = builder.finish(0);
    const telemetry::CardTickRecord& card = tick.cards.at(0);
    int deferred = 0;
    for (const telemetry::ProcessTick& p : card.processes) {
        const bool named = p.identity.container_name == "slow";
        deferred += named ? 0 : 1;
        EXPECT_EQ(p.idle_held_us.value_or(0), named ? k_poll / 10 : 0) << p.pid;
    }
    if (deferred == 0) {
        GTEST_SKIP() << "this machine named all ten within the budget: nothing deferred";
    }
    EXPECT_EQ(card.idle_unknown_us, deferred * k_poll / 10);
    const audit::StateTimes s = states_of(tick);
    EXPECT_EQ(s.idle_held, (10 - deferred) * k_poll / 10);
    EXPECT_EQ(s.unmeasured, deferred * k_poll / 10);
}

} // namespace held_instants_test
} // namespace gua::sampler
