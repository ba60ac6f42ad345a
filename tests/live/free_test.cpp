// SPDX-License-Identifier: Apache-2.0
// `gua free`'s verdict on one card from classified card-ticks: the truly idle stretch back from
// the newest, what breaks it (activity, a holder, an allocation, unmeasured time, a gap, the start
// of the recording), free memory, and the three output formats.
#include "live/free.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace gua::live {
namespace free_test { // named after the file: unique in a unity batch

constexpr DurationUs k_s = k_us_per_second;
constexpr DurationUs k_tick = 30 * k_s;

/// `n` back-to-back 30 s card-ticks from t = 0, each with the times `make(i)` gives.
std::vector<audit::StateSpan> ticks(int n, const std::function<audit::StateTimes(int)>& make) {
    std::vector<audit::StateSpan> out;
    for (int i = 0; i < n; ++i) {
        out.push_back({i * k_tick, k_tick, make(i)});
    }
    return out;
}

audit::StateTimes idle() {
    return audit::StateTimes{0, 0, k_tick, 0, 0};
}

telemetry::CardTickRecord card(std::int64_t used_mib = 1000, std::int64_t reserved_mib = 500) {
    telemetry::CardTickRecord r;
    r.device.index = 3;
    r.device.uuid = "GPU-3";
    r.device.memory_total_mib = 81559;
    r.readings.mem_used_mib = used_mib;
    r.readings.mem_reserved_mib = reserved_mib;
    return r;
}

FreeAsk ask_for(DurationUs d) {
    FreeAsk a;
    a.for_us = d;
    return a;
}

TEST(FreeJudge, IdleLongEnoughIsFreeAndShorterIsNot) {
    // Active until the 10th tick, idle for the 20 ticks after: 10 minutes truly idle.
    const auto spans = ticks(30, [](int i) {
        return i < 10 ? audit::StateTimes{k_tick, 0, 0, 0, 0} : idle();
    });
    const FreeCard ten = judge_card(card(), spans, ask_for(10 * k_us_per_minute));
    EXPECT_TRUE(ten.free);
    EXPECT_EQ(ten.truly_idle_us, 10 * k_us_per_minute);
    EXPECT_EQ(ten.memory_free_mib, 81559 - 1000 - 500);
    const FreeCard eleven = judge_card(card(), spans, ask_for(11 * k_us_per_minute));
    EXPECT_FALSE(eleven.free);
    EXPECT_EQ(eleven.reason, "active");
    EXPECT_EQ(eleven.detail, "truly idle for 10m only, 11m asked (active before)");
    EXPECT_EQ(eleven.truly_idle_us, 10 * k_us_per_minute);
}

TEST(FreeJudge, EachStateBreaksTheStretch) {
    const std::vector<std::pair<audit::StateTimes, std::string>> cases{
        {{k_s, 0, k_tick - k_s, 0, 0}, "active"},
        {{0, k_s, k_tick - k_s, 0, 0}, "idle-held"},
        {{0, 0, k_tick - k_s, 0, k_s}, "allocated"},
        {{0, 0, k_tick - k_s, k_s, 0}, "unmeasured"}, // 1 s of 30 s: over 1 %
    };
    for (const auto& [broken, reason] : cases) {
        const auto spans = ticks(20, [&](int i) { return i == 15 ? broken : idle(); });
        const FreeCard c = judge_card(card(), spans, ask_for(5 * k_us_per_minute));
        EXPECT_FALSE(c.free) << reason;
        EXPECT_EQ(c.reason, reason);
        EXPECT_EQ(c.truly_idle_us, 4 * k_tick) << reason;
    }
    // 1 % of a tick unmeasured (a ring period open at its end) does not break it.
    const auto sliver = ticks(20, [](int i) {
        return i == 15 ? audit::StateTimes{0, 0, k_tick - 300 * k_us_per_ms, 300 * k_us_per_ms, 0}
                       : idle();
    });
    EXPECT_TRUE(judge_card(card(), sliver, ask_for(5 * k_us_per_minute)).free);
}

TEST(FreeJudge, AGapOrTheStartOfTheRecordingIsUnmeasured) {
    auto spans = ticks(20, [](int) { return idle(); });
    spans.erase(spans.begin() + 12); // a lost tick
    const FreeCard gap = judge_card(card(), spans, ask_for(5 * k_us_per_minute));
    EXPECT_FALSE(gap.free);
    EXPECT_EQ(gap.reason, "unmeasured");
    EXPECT_EQ(gap.truly_idle_us, 7 * k_tick);
    EXPECT_EQ(gap.detail, "truly idle for 3m30s only, 5m asked (not recorded before)");
    const FreeCard before =
        judge_card(card(), ticks(4, [](int) { return idle(); }), ask_for(5 * k_us_per_minute));
    EXPECT_FALSE(before.free);
    EXPECT_EQ(before.reason, "unmeasured");
    const FreeCard none = judge_card(card(), {}, ask_for(0));
    EXPECT_FALSE(none.free);
    EXPECT_EQ(none.reason, "unmeasured");
}

TEST(FreeJudge, NowOnlyAndWhoHoldsTheNewestTick) {
    EXPECT_TRUE(judge_card(card(), ticks(1, [](int) { return idle(); }), ask_for(0)).free);
    telemetry::CardTickRecord held = card(9000);
    telemetry::ProcessTick p;
    p.pid = 4242;
    p.identity.user = "alice";
    p.mem_used_mib = 8000;
    held.processes.push_back(p);
    const FreeCard h = judge_card(held,
                                  ticks(3,
                                        [](int) {
                                            return audit::StateTimes{0, k_tick, 0, 0, 0};
                                        }),
                                  ask_for(0));
    EXPECT_EQ(h.reason, "idle-held");
    EXPECT_EQ(h.detail, "held idle now, by alice (pid 4242, 8000 MiB)");
    EXPECT_EQ(h.truly_idle_us, 0);
    telemetry::CardTickRecord allocated = card();
    allocated.allocations.push_back({"slurm-job", "77", "bob", "physics", 0, k_tick});
    const FreeCard a = judge_card(allocated,
                                  ticks(3,
                                        [](int) {
                                            return audit::StateTimes{0, 0, 0, 0, k_tick};
                                        }),
                                  ask_for(0));
    EXPECT_EQ(a.detail, "allocated to slurm-job 77 (bob)");
}

TEST(FreeJudge, MinimumMemory) {
    const auto spans = ticks(2, [](int) { return idle(); });
    FreeAsk ask = ask_for(0);
    ask.min_memory_mib = 81559 - 1500;
    EXPECT_TRUE(judge_card(card(), spans, ask).free) << "exactly enough";
    ask.min_memory_mib = 81559 - 1499;
    const FreeCard short_of = judge_card(card(), spans, ask);
    EXPECT_EQ(short_of.reason, "memory");
    EXPECT_EQ(short_of.detail, "80059 MiB free, 80060 MiB asked");
    telemetry::CardTickRecord unknown = card();
    unknown.readings.mem_used_mib.reset();
    EXPECT_EQ(judge_card(unknown, spans, ask).reason, "memory-unknown");
}

TEST(FreeRender, TextCudaAndJson) {
    FreeModel m;
    m.source = "daemon";
    m.ask.count = 2;
    for (const int i : {0, 1, 3}) {
        FreeCard c;
        c.index = i;
        c.free = i != 1;
        c.reason = c.free ? "" : "active";
        m.gpus.push_back(c);
    }
    EXPECT_EQ(render_free_text(m), "0,3\n");
    EXPECT_EQ(render_free_cuda(m), "CUDA_VISIBLE_DEVICES=0,3\n");
    m.ask.count = 1;
    EXPECT_EQ(render_free_cuda(m), "CUDA_VISIBLE_DEVICES=0\n") << "the first --count";
    m.ask.count = 3;
    EXPECT_EQ(render_free_cuda(m), "");
    EXPECT_FALSE(m.enough());
    const nlohmann::json j = nlohmann::json::parse(render_free_json(m));
    EXPECT_EQ(j["free"], nlohmann::json::array({0, 3}));
    EXPECT_FALSE(j["enough"].get<bool>());
    EXPECT_EQ(j["gpus"][1]["reason"], "active");
    EXPECT_TRUE(j["gpus"][0]["reason"].is_null());
    m.gpus.clear();
    EXPECT_EQ(render_free_text(m), "");
}

} // namespace free_test
} // namespace gua::live
