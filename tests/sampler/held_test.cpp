// SPDX-License-Identifier: Apache-2.0
// Idle-held vs truly idle decided poll by poll: each poll's idle time from the memory held
// together at that poll, split among that poll's holders by their memory at that poll; the
// per-process idle-held times add up to the card's exactly.
#include "audit/attribute.hpp"
#include "audit/from_tick.hpp"
#include "identity/resolver.hpp"
#include "sampler/fold.hpp"

#include <gtest/gtest.h>

#include <map>
#include <unordered_map>
#include <vector>

namespace gua::sampler {
namespace held_test { // named after the file: unique in a unity batch

constexpr TimeUs k_t0 = 1767607200LL * k_us_per_second;
constexpr DurationUs k_s = k_us_per_second;

telemetry::ProcessReading holder(std::uint32_t pid, std::optional<std::int64_t> mib,
                                 const std::string& user,
                                 telemetry::ProcessType type = telemetry::ProcessType::compute) {
    telemetry::ProcessReading r;
    r.pid = pid;
    r.type = type;
    r.mem_used_mib = mib;
    r.sm_util_pct = 0.0;
    telemetry::Identity who;
    who.user = user;
    r.identity = who;
    return r;
}

/// One poll of card GPU-a at `pct` % (one ring sample) listing `procs`.
telemetry::DevicePoll at(double pct, std::vector<telemetry::ProcessReading> procs,
                         bool unknown = false) {
    telemetry::DevicePoll p;
    p.uuid = "GPU-a";
    p.util_source = telemetry::UtilSource::samples;
    p.util = {{pct, 1}};
    p.processes = std::move(procs);
    p.processes_unknown = unknown;
    return p;
}

class Held : public ::testing::Test {
  protected:
    identity::Resolver m_resolver{"/nonexistent-proc"};
    TickBuilder m_builder{audit::Thresholds{}, m_resolver};
    std::unordered_map<std::string, telemetry::DeviceInfo> m_devices{
        {"GPU-a", telemetry::DeviceInfo{"GPU-a", 0, "Card A", 81920, "", ""}}};

    /// Six 5 s polls make one 30 s tick.
    telemetry::CardTickRecord fold(const std::vector<telemetry::DevicePoll>& polls) {
        m_builder.start(k_t0);
        for (const telemetry::DevicePoll& p : polls) {
            m_builder.add_poll({p}, 5 * k_s, m_devices);
        }
        return m_builder.finish(0).cards.at(0);
    }

    /// Idle-held µs per user as the audit attributes the card-tick.
    static std::map<std::string, DurationUs> held_by_user(const telemetry::CardTickRecord& c) {
        telemetry::Tick tick;
        tick.t0 = k_t0;
        tick.duration_us = 30 * k_s;
        audit::CardTick t = audit::to_card_tick(tick, c);
        for (std::size_t i = 0; i < t.processes.size(); ++i) {
            t.processes[i].identity = static_cast<std::uint32_t>(i + 1);
        }
        const audit::StateTimes states = audit::classify(t, audit::Thresholds{});
        std::vector<audit::IdentityShareUs> shares;
        audit::attribute_us(t, states, audit::Thresholds{}, 0, shares);
        std::map<std::string, DurationUs> out;
        DurationUs sum = 0;
        for (const audit::IdentityShareUs& s : shares) {
            out[c.processes.at(s.identity - 1).identity.user] += s.idle_held_us;
            sum += s.idle_held_us;
        }
        EXPECT_EQ(sum, states.idle_held) << "identity idle-held time adds up to the card's";
        return out;
    }

    static DurationUs idle_held(const telemetry::CardTickRecord& c) {
        telemetry::Tick tick;
        tick.duration_us = 30 * k_s;
        return audit::classify(audit::to_card_tick(tick, c), audit::Thresholds{}).idle_held;
    }
};

// A 20 GiB holder that exits 10 s into an idle 30 s tick holds the card for those 10 s only.
TEST_F(Held, AShortHolderHoldsOnlyWhileListed) {
    const auto a = holder(1, 20480, "a");
    const telemetry::CardTickRecord c =
        fold({at(0, {a}), at(0, {a}), at(0, {}), at(0, {}), at(0, {}), at(0, {})});
    EXPECT_EQ(idle_held(c), 10 * k_s);
    EXPECT_EQ(c.idle_unlisted_us, 20 * k_s);
    EXPECT_EQ(held_by_user(c)["a"], 10 * k_s);
}

// Memory hovering around the 100 MiB threshold: held only at the polls above it.
TEST_F(Held, MemoryAroundTheThresholdIsHeldOnlyAboveIt) {
    const telemetry::CardTickRecord c = fold(
        {at(0, {holder(1, 90, "a")}), at(0, {holder(1, 120, "a")}), at(0, {holder(1, 100, "a")}),
         at(0, {holder(1, 101, "a")}), at(0, {holder(1, 20, "a")}), at(0, {holder(1, 20, "a")})});
    EXPECT_EQ(idle_held(c), 10 * k_s);
    EXPECT_EQ(c.idle_unlisted_us, 20 * k_s);
    ASSERT_EQ(c.processes.size(), 1U);
    EXPECT_EQ(c.processes[0].mem_used_mib, 120) << "the largest memory is still reported";
}

// Two 60 MiB holders that take turns never hold the card; listed together they do.
TEST_F(Held, HoldersTakingTurnsAreNotSummed) {
    const auto a = holder(1, 60, "a");
    const auto b = holder(2, 60, "b");
    const telemetry::CardTickRecord apart =
        fold({at(0, {a}), at(0, {a}), at(0, {a}), at(0, {b}), at(0, {b}), at(0, {b})});
    EXPECT_EQ(idle_held(apart), 0);
    EXPECT_EQ(apart.idle_unlisted_us, 30 * k_s);
    const telemetry::CardTickRecord together =
        fold({at(0, {a}), at(0, {a, b}), at(0, {a}), at(0, {b}), at(0, {b}), at(0, {b})});
    EXPECT_EQ(idle_held(together), 5 * k_s);
    const auto users = held_by_user(together);
    EXPECT_EQ(users.at("a"), 2500 * k_us_per_ms);
    EXPECT_EQ(users.at("b"), 2500 * k_us_per_ms);
}

// A whose 5 s job ended early is charged for the 5 s it shared, not for B's 25 s alone.
TEST_F(Held, EachPollIsSplitAmongItsOwnHolders) {
    const auto a = holder(1, 8000, "a");
    const auto b = holder(2, 8000, "b");
    const telemetry::CardTickRecord c =
        fold({at(0, {a, b}), at(0, {b}), at(0, {b}), at(0, {b}), at(0, {b}), at(0, {b})});
    EXPECT_EQ(idle_held(c), 30 * k_s);
    const auto users = held_by_user(c);
    EXPECT_EQ(users.at("a"), 2500 * k_us_per_ms);
    EXPECT_EQ(users.at("b"), 27500 * k_us_per_ms);
}

// An MPS server idles on its own after its client's work ends: the server's time is its own.
TEST_F(Held, AnMpsClientIsNotChargedForTheServersIdleTime) {
    const auto server = holder(10, 2000, "server", telemetry::ProcessType::mps);
    const auto client = holder(11, 6000, "client");
    const telemetry::CardTickRecord c =
        fold({at(100, {server, client}), at(0, {server, client}), at(0, {server}), at(0, {server}),
              at(0, {server}), at(0, {server})});
    EXPECT_EQ(idle_held(c), 25 * k_s);
    const auto users = held_by_user(c);
    EXPECT_EQ(users.at("client"), 3750 * k_us_per_ms);
    EXPECT_EQ(users.at("server"), 21250 * k_us_per_ms);
}

// Unknown memory holds (a live context always holds some); unknown holders stay unknown; active
// time is never idle-held; a graphics context alone holds nothing by default.
TEST_F(Held, UnknownMemoryHoldsAndUnknownHoldersAreUnknown) {
    const telemetry::CardTickRecord c =
        fold({at(0, {holder(1, std::nullopt, "a")}), at(0, {holder(1, 8000, "a")}, true),
              at(50, {holder(1, 8000, "a")}),
              at(0, {holder(2, 8000, "x", telemetry::ProcessType::graphics)}), at(0, {}),
              at(0, {holder(1, 8000, "a")})});
    EXPECT_EQ(c.active_us, 5 * k_s);
    EXPECT_EQ(c.idle_unknown_us, 5 * k_s);
    EXPECT_EQ(c.idle_unlisted_us, 10 * k_s);
    EXPECT_EQ(idle_held(c), 10 * k_s);
    EXPECT_EQ(held_by_user(c)["a"], 10 * k_s);
}

// Odd spans: the per-process parts still add up to the card's idle-held time to the µs.
TEST_F(Held, PartsAddUpExactly) {
    m_builder.start(k_t0);
    const std::vector<DurationUs> spans{1234567, 999999, 3333333, 17, 4999999};
    for (std::size_t i = 0; i < spans.size(); ++i) {
        m_builder.add_poll({at(i == 3 ? 70.0 : 3.0,
                               {holder(1, 333, "a"), holder(2, 777 + static_cast<int>(i), "b"),
                                holder(3, 1, "c")})},
                           spans[i], m_devices);
    }
    const telemetry::Tick t = m_builder.finish(0);
    const telemetry::CardTickRecord& c = t.cards.at(0);
    audit::CardTick ct = audit::to_card_tick(t, c);
    const audit::StateTimes states = audit::classify(ct, audit::Thresholds{});
    DurationUs sum = 0;
    for (const telemetry::ProcessTick& p : c.processes) {
        ASSERT_TRUE(p.idle_held_us.has_value());
        sum += *p.idle_held_us;
    }
    EXPECT_EQ(sum, states.idle_held);
    EXPECT_EQ(states.total(), t.duration_us);
}

} // namespace held_test
} // namespace gua::sampler
