// SPDX-License-Identifier: Apache-2.0
// export::Metrics with allocations: allocated-unused per card and per owner (bounded labels, no
// job id label on a counter), the running allocation as an info gauge, nothing without them.
#include "export/exposition_parse.hpp"
#include "export/metrics.hpp"
#include "export/ticks.hpp"

#include <gtest/gtest.h>

namespace gua::exporter {
namespace metrics_allocation_test {

using testing::card;
using testing::parse_exposition;

MetricsOptions options(std::size_t max_users) {
    MetricsOptions o;
    o.max_users = max_users;
    o.interval_us = 30 * k_us_per_second;
    return o;
}

/// Card `index` idle for 30 s of tick `t`, owned by `owners` (each over [begin, end) in
/// seconds from the tick's start) and allocated-unused for the time they cover together.
telemetry::CardTickRecord idle_card(const telemetry::Tick& t, int index,
                                    const std::vector<telemetry::AllocationOwner>& owners,
                                    DurationUs covered_us) {
    telemetry::CardTickRecord c = card(index, 30, 0, {});
    c.allocation.allocated_us = covered_us;
    c.allocation.unused_us = covered_us;
    for (telemetry::AllocationOwner o : owners) {
        o.begin += t.t0;
        o.end += t.t0;
        c.allocations.push_back(o);
    }
    return c;
}

TEST(MetricsAllocation, UnusedSecondsPerCardAndOwner) {
    Metrics m(options(1));
    telemetry::Tick t = testing::tick(0, 30);
    const DurationUs s = k_us_per_second;
    // GPU 0: job 7 of alice (account physics) for 10 s, then job 8 of dave (account chem) for
    // 20 s; GPU 1: pod ml/train (namespace ml, no user) the whole tick; GPU 2: free.
    t.cards.push_back(idle_card(t, 0,
                                {{"slurm-job", "7", "alice", "physics", 0, 10 * s},
                                 {"slurm-job", "8", "dave", "chem", 10 * s, 30 * s}},
                                30 * s));
    t.cards.push_back(idle_card(t, 1, {{"pod", "ml/train", "", "ml", 0, 30 * s}}, 30 * s));
    t.cards.push_back(card(2, 30, 0, {}));
    m.observe(t);
    const auto series = parse_exposition(m.render());
    const auto state = [&](int gpu, const char* name) {
        const std::string key = fmt::format(
            R"(gua_gpu_seconds_total{{gpu="{}",uuid="GPU-00000000-0000-0000-0000-{:012}",)"
            R"(model="NVIDIA H100 80GB HBM3",state="{}"}})",
            gpu, gpu, name);
        return series.count(key) ? series.at(key) : -1.0;
    };
    EXPECT_DOUBLE_EQ(state(0, "allocated_unused"), 30);
    EXPECT_DOUBLE_EQ(state(0, "truly_idle"), 0);
    EXPECT_DOUBLE_EQ(state(1, "allocated_unused"), 30);
    EXPECT_DOUBLE_EQ(state(2, "truly_idle"), 30);
    EXPECT_EQ(state(2, "allocated_unused"), -1.0); // no series where none was allocated
    // Owners, split by overlap; one own label (max_users 1), the rest "other".
    EXPECT_DOUBLE_EQ(series.at(R"(gua_allocated_unused_user_seconds_total{user="alice"})"), 10);
    EXPECT_DOUBLE_EQ(series.at(R"(gua_allocated_unused_user_seconds_total{user="other"})"), 50);
    EXPECT_DOUBLE_EQ(series.at(R"(gua_allocated_unused_account_seconds_total{account="physics"})"),
                     10);
    EXPECT_DOUBLE_EQ(series.at(R"(gua_allocated_unused_account_seconds_total{account="other"})"),
                     50);
    // Only the allocations running at the tick's end, as info gauges (job 7 ended at 10 s).
    EXPECT_EQ(series.count(R"(gua_allocation_info{gpu="0",uuid="GPU-00000000-0000-0000-0000-)"
                           R"(000000000000",kind="slurm-job",id="8",user="dave",account="chem"})"),
              1u);
    std::size_t info = 0;
    for (const auto& [key, value] : series) {
        info += key.starts_with("gua_allocation_info{") ? 1 : 0;
        // No counter carries a job id.
        if (key.find("_total{") != std::string::npos) {
            EXPECT_EQ(key.find(",id=\""), std::string::npos) << key;
            EXPECT_EQ(key.find("{id=\""), std::string::npos) << key;
        }
    }
    EXPECT_EQ(info, 2u);
}

TEST(MetricsAllocation, NothingWithoutAllocations) {
    Metrics m(options(20));
    telemetry::Tick t = testing::tick(0, 30);
    t.cards.push_back(card(0, 30, 0, {}));
    m.observe(t);
    const std::string text = m.render();
    EXPECT_EQ(text.find("alloc"), std::string::npos);
}

} // namespace metrics_allocation_test
} // namespace gua::exporter
