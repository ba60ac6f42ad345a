// SPDX-License-Identifier: Apache-2.0
// The writer's caches stay bounded whatever number of processes come and go: only the processes
// of the last tick are kept in the fast path, and the row-id caches are emptied at their cap.
#include "store/writer.hpp"
#include "support/raw_db.hpp"
#include "temp_db.hpp"

#include <gtest/gtest.h>

namespace gua::store {
namespace writer_cache_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1777593600LL * k_us_per_second;

/// One 1 s tick `k` of one card held by `per_tick` processes that live for this tick only.
telemetry::Tick churn_tick(int k, int per_tick) {
    telemetry::Tick t;
    t.t0 = k_start + k * k_us_per_second;
    t.duration_us = k_us_per_second;
    telemetry::CardTickRecord c;
    c.device = telemetry::DeviceInfo{"GPU-a", 0, "H100", 81920, "", ""};
    c.util_source = telemetry::UtilSource::snapshot;
    c.util_pct = 0;
    c.active_us = 0;
    c.bucket_us = {k_us_per_second, 0, 0, 0};
    for (int i = 0; i < per_tick; ++i) {
        telemetry::ProcessTick p;
        p.pid = static_cast<std::uint32_t>(100000 + k * per_tick + i);
        p.start_ticks = static_cast<std::uint64_t>(k);
        p.identity.user = "alice";
        p.identity.uid = 1500;
        p.identity.command = "python3";
        p.identity.jupyter_kernel = "kernel-" + std::to_string(k * per_tick + i); // new identities
        p.mem_used_mib = 100;
        c.processes.push_back(p);
    }
    t.cards.push_back(c);
    return t;
}

TEST(WriterCache, BoundedWhateverTheNumberOfProcessesSeen) {
    testing::TempDb t;
    Writer w(t.db, RunInfo{"h", "d", "nvml", k_us_per_second, 10.0, k_start});
    constexpr int k_per_tick = 320;
    std::size_t most = 0;
    for (int k = 0; k < 60; ++k) { // 19 200 processes and identities, each seen once
        w.write(churn_tick(k, k_per_tick));
        most = std::max(most, w.cached_entries());
        if (k == 0) {
            EXPECT_EQ(w.cached_entries(), 3u * k_per_tick);
        }
    }
    w.finish(k_start + 60 * k_us_per_second);
    // The fast path holds one tick's processes; each id cache at most its cap.
    EXPECT_LE(most, k_per_tick + 2 * Writer::k_max_cached_ids);
    test::RawDb raw(t.path);
    EXPECT_EQ(raw.one("SELECT count(*) FROM process"), std::to_string(60 * k_per_tick));
}

TEST(WriterCache, AProcessSeenAgainAfterEvictionKeepsItsRow) {
    testing::TempDb t;
    Writer w(t.db, RunInfo{"h", "d", "nvml", k_us_per_second, 10.0, k_start});
    w.write(churn_tick(0, 1));
    w.write(churn_tick(1, 1)); // another process: the first leaves the fast path
    telemetry::Tick again = churn_tick(0, 1);
    again.t0 = k_start + 2 * k_us_per_second;
    w.write(again);
    w.finish(k_start + 3 * k_us_per_second);
    test::RawDb raw(t.path);
    EXPECT_EQ(raw.one("SELECT count(*) FROM process"), "2");
    EXPECT_EQ(raw.one("SELECT count(*) FROM identity"), "2");
}

} // namespace writer_cache_test
} // namespace gua::store
