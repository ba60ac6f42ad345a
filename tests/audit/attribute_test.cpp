// SPDX-License-Identifier: Apache-2.0
// Attribution of card-tick time to identities: SM-share and memory splits, merging, `nobody`,
// idle-held GiB-hours, and the no-double-counting property (DESIGN.md "No double counting").
#include "audit/attribute.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <vector>

namespace gua::audit {
namespace attribute_test { // named after the file: unique in a unity batch

constexpr DurationUs k_dur = 30 * k_us_per_second;
constexpr std::uint32_t k_nobody = 99;

using rc::Gen;
namespace gen = rc::gen;

ProcTick proc(std::uint32_t identity, std::optional<std::int64_t> mib,
              std::optional<double> sm = std::nullopt,
              telemetry::ProcessType type = telemetry::ProcessType::compute) {
    return ProcTick{identity, type, mib, sm, std::nullopt, std::nullopt};
}

CardTick tick(std::optional<DurationUs> active_us, std::vector<ProcTick> procs) {
    CardTick t;
    t.duration_us = k_dur;
    t.active_us = active_us;
    t.processes = std::move(procs);
    return t;
}

std::vector<IdentityShare> attribute_all(const CardTick& t, const Thresholds& th = {}) {
    std::vector<IdentityShare> out;
    attribute(t, classify(t, th), th, k_nobody, out);
    return out;
}

const IdentityShare* find(const std::vector<IdentityShare>& shares, std::uint32_t identity) {
    for (const IdentityShare& s : shares) {
        if (s.identity == identity) {
            return &s;
        }
    }
    return nullptr;
}

TEST(Attribute, CoTenantsSplitActiveBySmAndIdleHeldByMemory) {
    // 20 s active, 10 s idle-held. SM 60:20 → active 15 s / 5 s; memory 1000:3000 → idle-held
    // 2.5 s / 7.5 s.
    const auto out =
        attribute_all(tick(20 * k_us_per_second, {proc(1, 1000, 60.0), proc(2, 3000, 20.0)}));
    ASSERT_EQ(out.size(), 2U);
    const IdentityShare* a = find(out, 1);
    const IdentityShare* b = find(out, 2);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_DOUBLE_EQ(a->active_us, 15e6);
    EXPECT_DOUBLE_EQ(b->active_us, 5e6);
    EXPECT_DOUBLE_EQ(a->idle_held_us, 2.5e6);
    EXPECT_DOUBLE_EQ(b->idle_held_us, 7.5e6);
    EXPECT_EQ(find(out, k_nobody), nullptr);
}

TEST(Attribute, WithoutPerProcessSmActiveIsSplitByMemory) {
    const auto out = attribute_all(tick(k_dur, {proc(1, 1000), proc(2, 3000)}));
    ASSERT_EQ(out.size(), 2U);
    EXPECT_DOUBLE_EQ(find(out, 1)->active_us, 7.5e6);
    EXPECT_DOUBLE_EQ(find(out, 2)->active_us, 22.5e6);
    EXPECT_DOUBLE_EQ(find(out, 1)->idle_held_us, 0.0);
}

TEST(Attribute, AllZeroSmReadingsFallBackToMemory) {
    const auto out = attribute_all(tick(k_dur, {proc(1, 1000, 0.0), proc(2, 3000, 0.0)}));
    EXPECT_DOUBLE_EQ(find(out, 1)->active_us, 7.5e6);
    EXPECT_DOUBLE_EQ(find(out, 2)->active_us, 22.5e6);
}

TEST(Attribute, UnknownMemoryWeighsAsTheHeldThreshold) {
    // 300 MiB vs unknown (counted as 100 MiB): idle-held 3:1.
    const auto out = attribute_all(tick(0, {proc(1, 300), proc(2, std::nullopt)}));
    EXPECT_DOUBLE_EQ(find(out, 1)->idle_held_us, 22.5e6);
    EXPECT_DOUBLE_EQ(find(out, 2)->idle_held_us, 7.5e6);
}

TEST(Attribute, ProcessesOfOneIdentityMerge) {
    const auto out = attribute_all(tick(
        15 * k_us_per_second, {proc(1, 1000, 30.0), proc(2, 2000, 30.0), proc(1, 1000, 30.0)}));
    ASSERT_EQ(out.size(), 2U);
    EXPECT_DOUBLE_EQ(find(out, 1)->active_us, 10e6);
    EXPECT_DOUBLE_EQ(find(out, 2)->active_us, 5e6);
    EXPECT_DOUBLE_EQ(find(out, 1)->idle_held_us, 7.5e6);
    EXPECT_DOUBLE_EQ(find(out, 2)->idle_held_us, 7.5e6);
}

TEST(Attribute, ActiveTimeWithoutProcessGoesToNobody) {
    const auto out = attribute_all(tick(12 * k_us_per_second, {}));
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(out[0].identity, k_nobody);
    EXPECT_DOUBLE_EQ(out[0].active_us, 12e6);
    EXPECT_DOUBLE_EQ(out[0].idle_held_us, 0.0);
}

TEST(Attribute, GraphicsProcessesGetNoIdleHeldTime) {
    const auto out = attribute_all(
        tick(0, {proc(1, 8000), proc(2, 128, std::nullopt, telemetry::ProcessType::graphics)}));
    EXPECT_DOUBLE_EQ(find(out, 1)->idle_held_us, static_cast<double>(k_dur));
    const IdentityShare* xorg = find(out, 2);
    if (xorg != nullptr) {
        EXPECT_DOUBLE_EQ(xorg->idle_held_us, 0.0);
        EXPECT_DOUBLE_EQ(xorg->idle_held_mib_us, 0.0);
    }
}

TEST(Attribute, GraphicsGetsNoActiveTimeWhenAComputeHolderIsPresent) {
    const auto out = attribute_all(tick(
        k_dur, {proc(1, 8000), proc(2, 4000, std::nullopt, telemetry::ProcessType::graphics)}));
    EXPECT_DOUBLE_EQ(find(out, 1)->active_us, static_cast<double>(k_dur));
    const IdentityShare* xorg = find(out, 2);
    EXPECT_TRUE(xorg == nullptr || xorg->active_us == 0.0);
}

TEST(Attribute, IdleTenantAccruesIdleHeldMemoryOnAnActiveCard) {
    // grace trains at 75 % SM; heidi holds 20 GiB with 0 % SM on the same, fully active card.
    const auto out = attribute_all(tick(k_dur, {proc(7, 16000, 75.0), proc(8, 20480, 0.0)}));
    const IdentityShare* grace = find(out, 7);
    const IdentityShare* heidi = find(out, 8);
    ASSERT_NE(grace, nullptr);
    ASSERT_NE(heidi, nullptr);
    EXPECT_DOUBLE_EQ(grace->active_us, static_cast<double>(k_dur));
    EXPECT_DOUBLE_EQ(heidi->active_us, 0.0);
    EXPECT_DOUBLE_EQ(heidi->idle_held_us, 0.0); // the card was not idle-held
    EXPECT_DOUBLE_EQ(grace->idle_held_mib_us, 0.0);
    EXPECT_DOUBLE_EQ(heidi->idle_held_mib_us, 20480.0 * static_cast<double>(k_dur));
}

TEST(Attribute, WithoutPerProcessSmIdleHeldMemoryAccruesForCardIdleTime) {
    // 40 % active: the 18 s the card was idle count, the 12 s active do not.
    const auto out = attribute_all(tick(12 * k_us_per_second, {proc(1, 1000)}));
    EXPECT_DOUBLE_EQ(out.at(0).idle_held_mib_us, 1000.0 * 18e6);
    // Unmeasured utilization: no idle time is known, so none accrues.
    const auto unmeasured = attribute_all(tick(std::nullopt, {proc(1, 1000)}));
    for (const IdentityShare& s : unmeasured) {
        EXPECT_DOUBLE_EQ(s.idle_held_mib_us, 0.0);
        EXPECT_DOUBLE_EQ(s.active_us + s.idle_held_us, 0.0);
    }
}

TEST(Attribute, BusyOnAverageHolderAccruesIdleMemoryWhileTheCardIsIdle) {
    // The only process on a card that is active half the tick reports a tick-mean SM of 50 %.
    // While the card is below the active threshold every process on it is idle, so the 15 s of
    // card idle-held time (all of it attributed to this holder) are idle-held memory time too.
    // This is the bursty workload's carol, whose "idle GiB-hours" the report shows as 0.00.
    const auto out = attribute_all(tick(15 * k_us_per_second, {proc(1, 42000, 50.0)}));
    ASSERT_EQ(out.size(), 1U);
    EXPECT_DOUBLE_EQ(out[0].active_us, 15e6);
    EXPECT_DOUBLE_EQ(out[0].idle_held_us, 15e6);
    EXPECT_DOUBLE_EQ(out[0].idle_held_mib_us, 42000.0 * 15e6);
}

TEST(Attribute, OutputIsClearedFirst) {
    std::vector<IdentityShare> out{IdentityShare{42, 1, 2, 3}};
    const CardTick t = tick(k_dur, {proc(1, 1000)});
    attribute(t, classify(t, {}), {}, k_nobody, out);
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(out[0].identity, 1U);
}

Gen<CardTick> gen_tick() {
    return gen::apply(
        [](DurationUs duration, int active_permille, bool measured,
           std::vector<std::tuple<std::uint32_t, int, int, int, bool, bool>> procs) {
            CardTick t;
            t.duration_us = duration;
            if (measured) {
                t.active_us = duration * active_permille / 1000;
            }
            for (const auto& [identity, type, mib, sm, has_mib, has_sm] : procs) {
                ProcTick p;
                p.identity = identity;
                p.type = static_cast<telemetry::ProcessType>(type);
                if (has_mib) {
                    p.mem_used_mib = mib;
                }
                if (has_sm) {
                    p.sm_util_pct = sm;
                }
                t.processes.push_back(p);
            }
            return t;
        },
        gen::inRange<DurationUs>(1, 3600 * k_us_per_second), gen::inRange(0, 1001),
        gen::weightedElement<bool>({{9, true}, {1, false}}),
        gen::container<std::vector<std::tuple<std::uint32_t, int, int, int, bool, bool>>>(
            gen::tuple(gen::inRange<std::uint32_t>(1, 5), gen::inRange(0, 3),
                       gen::inRange(0, 90000), gen::inRange(0, 101), gen::arbitrary<bool>(),
                       gen::arbitrary<bool>())));
}

bool close(double a, double b) {
    return std::abs(a - b) <= 1e-6 * std::max({1.0, std::abs(a), std::abs(b)});
}

RC_GTEST_PROP(Attribute, SharesAddUpToTheCardStates, ()) {
    const CardTick t = *gen_tick();
    Thresholds th;
    th.graphics_is_holder = *gen::arbitrary<bool>();
    const StateTimes states = classify(t, th);
    std::vector<IdentityShare> out;
    attribute(t, states, th, k_nobody, out);
    double active = 0;
    double idle_held = 0;
    for (const IdentityShare& s : out) {
        RC_ASSERT(s.active_us >= 0.0);
        RC_ASSERT(s.idle_held_us >= 0.0);
        RC_ASSERT(s.idle_held_mib_us >= 0.0);
        active += s.active_us;
        idle_held += s.idle_held_us;
    }
    RC_ASSERT(close(active, static_cast<double>(states.active)));
    RC_ASSERT(close(idle_held, static_cast<double>(states.idle_held)));
    for (std::size_t i = 0; i < out.size(); ++i) {
        for (std::size_t j = i + 1; j < out.size(); ++j) {
            RC_ASSERT(out[i].identity != out[j].identity);
        }
    }
}

} // namespace attribute_test
} // namespace gua::audit
