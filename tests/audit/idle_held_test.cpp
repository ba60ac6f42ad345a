// SPDX-License-Identifier: Apache-2.0
// The idle-held predicate: per-process reading first, the card's state without one, never on MIG.
#include "audit/idle_held.hpp"

#include <gtest/gtest.h>

namespace gua::audit {
namespace idle_held_test { // named after the file: unique in a unity batch

using telemetry::ProcessType;

constexpr DurationUs k_tick = 30 * k_us_per_second;

CardTick card(std::optional<DurationUs> active_us, std::vector<ProcTick> processes) {
    CardTick t;
    t.duration_us = k_tick;
    t.active_us = active_us;
    t.processes = std::move(processes);
    return t;
}

TEST(IdleHeld, OwnReadingDecidesEvenOnAnActiveCard) {
    const Thresholds th;
    const CardTick busy = card(k_tick, {});
    const StateTimes states = classify(busy, th);
    EXPECT_TRUE(is_idle_held(
        ProcTick{0, ProcessType::compute, 8192, 0.0, std::nullopt, std::nullopt}, states, th));
    EXPECT_TRUE(is_idle_held(
        ProcTick{0, ProcessType::compute, 8192, 9.9, std::nullopt, std::nullopt}, states, th));
    EXPECT_FALSE(is_idle_held(
        ProcTick{0, ProcessType::compute, 8192, 10.0, std::nullopt, std::nullopt}, states, th));
}

TEST(IdleHeld, WithoutOwnReadingTheCardDecides) {
    const Thresholds th;
    const ProcTick p{0, ProcessType::compute, 8192, std::nullopt, std::nullopt, std::nullopt};
    EXPECT_TRUE(is_idle_held(p, classify(card(0, {p}), th), th));
    EXPECT_TRUE(is_idle_held(p, classify(card(k_tick / 2 - 1, {p}), th), th));
    EXPECT_FALSE(is_idle_held(p, classify(card(k_tick / 2, {p}), th), th));
    EXPECT_FALSE(is_idle_held(p, classify(card(std::nullopt, {p}), th), th)) << "MIG: n/a";
}

TEST(IdleHeld, OnlyHoldersWithMemory) {
    Thresholds th;
    const StateTimes idle = classify(card(0, {}), th);
    EXPECT_FALSE(is_idle_held(
        ProcTick{0, ProcessType::graphics, 500, 0.0, std::nullopt, std::nullopt}, idle, th));
    EXPECT_TRUE(is_idle_held(ProcTick{0, ProcessType::mps, 500, 0.0, std::nullopt, std::nullopt},
                             idle, th));
    EXPECT_FALSE(is_idle_held(ProcTick{0, ProcessType::compute, 0, 0.0, std::nullopt, std::nullopt},
                              idle, th));
    EXPECT_TRUE(is_idle_held(
        ProcTick{0, ProcessType::compute, std::nullopt, 0.0, std::nullopt, std::nullopt}, idle, th))
        << "unknown memory still holds (a live context always has some)";
    th.graphics_is_holder = true;
    EXPECT_TRUE(is_idle_held(
        ProcTick{0, ProcessType::graphics, 500, 0.0, std::nullopt, std::nullopt}, idle, th));
}

TEST(IdleHeld, HoldingsSeenMergesContextsOfOneProcess) {
    const Thresholds th;
    const CardTick t =
        card(0, {ProcTick{0, ProcessType::compute, 4096, 0.0, std::nullopt, std::nullopt},
                 ProcTick{0, ProcessType::mps, 4096, 50.0, std::nullopt, std::nullopt},
                 ProcTick{0, ProcessType::graphics, 100, 0.0, std::nullopt, std::nullopt},
                 ProcTick{0, ProcessType::compute, 2048, 0.0, std::nullopt, std::nullopt}});
    const std::vector<ProcessKey> keys{{7, 70}, {7, 70}, {8, 80}, {9, 90}};
    const std::vector<HoldingSeen> seen = holdings_seen(t, keys, th);
    ASSERT_EQ(seen.size(), 2U) << "the graphics-only process is no holder";
    EXPECT_EQ(seen[0].process, (ProcessKey{7, 70}));
    EXPECT_FALSE(seen[0].idle_held) << "its MPS context is busy";
    EXPECT_EQ(seen[1].process, (ProcessKey{9, 90}));
    EXPECT_TRUE(seen[1].idle_held);
}

} // namespace idle_held_test
} // namespace gua::audit
