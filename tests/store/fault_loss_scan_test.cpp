// SPDX-License-Identifier: Apache-2.0
// The report's lost-to-faults spans over a real store: a span that outlasts the first stretch of
// card-ticks read after its fault (read on, twice as far each time), a second fault days later
// (read from an hour before it, nothing in between needed), one still open at the window's end,
// and an application fault that strands nothing; the spans integrated here from the scenario.
#include "report/fault_loss.hpp"
#include "store/faults.hpp"
#include "store/reader.hpp"
#include "store/writer.hpp"
#include "temp_db.hpp"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace gua::store {
namespace fault_loss_scan_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1777593600LL * k_us_per_second; // an hour boundary
constexpr DurationUs k_s = k_us_per_second;
constexpr DurationUs k_tick = 60 * k_s;
constexpr int k_ticks = 3 * 24 * 60; // three days
// Card 0: an Xid 79 30 s into tick 90, the card stuck (idle, memory held) for 300 ticks (five
// hours: longer than the first two stretches read); an Xid 79 10 s into tick 3000, stuck to the
// end. Card 1: an Xid 43 (the application's own fault) at tick 100, busy throughout.
constexpr int k_fault1_tick = 90;
constexpr int k_stuck1_ticks = 300;
constexpr int k_fault2_tick = 3000;
constexpr TimeUs k_fault1_at = k_start + k_fault1_tick * k_tick + 30 * k_s;
constexpr TimeUs k_fault2_at = k_start + k_fault2_tick * k_tick + 10 * k_s;

bool stuck(int index, int k) {
    return index == 0 &&
           ((k >= k_fault1_tick && k < k_fault1_tick + k_stuck1_ticks) || k >= k_fault2_tick);
}

telemetry::CardTickRecord card(int index, int k) {
    telemetry::CardTickRecord c;
    c.device = telemetry::DeviceInfo{
        index == 0 ? "GPU-a" : "GPU-b", index, "NVIDIA H100 80GB HBM3", 81559, "", ""};
    c.util_source = telemetry::UtilSource::samples;
    telemetry::ProcessTick p;
    p.pid = 4000 + index;
    p.start_ticks = 1;
    p.identity.user = "alice";
    p.mem_used_mib = 4096;
    c.readings.mem_used_mib = 4096;
    if (stuck(index, k)) {
        c.util_pct = 0;
        c.active_us = 0;
        c.bucket_us = {k_tick, 0, 0, 0};
        p.sm_util_pct = 0;
        p.active_us = 0;
    } else {
        c.util_pct = 50;
        c.active_us = k_tick;
        c.bucket_us = {0, k_tick, 0, 0};
        p.sm_util_pct = 50;
        p.active_us = k_tick;
    }
    c.processes.push_back(p);
    return c;
}

telemetry::FaultEvent fault(const char* uuid, int xid, TimeUs at) {
    telemetry::FaultEvent e;
    e.uuid = uuid;
    e.xid = xid;
    e.at_us = at;
    e.sources = 1;
    return e;
}

void record(Database& db) {
    Writer w(db, RunInfo{"node-1", "d", "nvml", k_tick, 10.0, k_start});
    for (int k = 0; k < k_ticks; ++k) {
        telemetry::Tick t;
        t.seq = static_cast<std::uint64_t>(k);
        t.t0 = k_start + k * k_tick;
        t.duration_us = k_tick;
        t.cards = {card(0, k), card(1, k)};
        w.write(t);
    }
    w.finish(k_start + k_ticks * k_tick);
    insert_faults(db, w.run_id(),
                  {fault("GPU-a", 79, k_fault1_at), fault("GPU-b", 43, k_start + 100 * k_tick),
                   fault("GPU-a", 79, k_fault2_at)});
}

TEST(FaultLossScan, SpansOverAStoreEndWhereTheCardWasBusyAgainOrAtTheWindowsEnd) {
    testing::TempDb t;
    record(t.db);
    Reader reader(t.db);
    const std::vector<GpuRow> gpus = reader.gpus();
    std::map<std::string, std::uint32_t> id;
    for (const GpuRow& g : gpus) {
        id[g.uuid] = static_cast<std::uint32_t>(g.id);
    }
    const TimeUs to = k_start + k_ticks * k_tick;
    const audit::FaultSpans spans =
        report::fault_loss_spans(t.db, reader, gpus, audit::Thresholds{}, k_start, to);
    ASSERT_EQ(spans.spans().size(), 1U) << "the application fault on GPU-b strands nothing";
    const std::vector<audit::FaultSpan> expected{
        {k_fault1_at, k_start + (k_fault1_tick + k_stuck1_ticks) * k_tick}, {k_fault2_at, to}};
    EXPECT_EQ(spans.spans().at(id.at("GPU-a")), expected);
}

} // namespace fault_loss_scan_test
} // namespace gua::store
