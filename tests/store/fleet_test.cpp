// SPDX-License-Identifier: Apache-2.0
// gpu-usage-audit's reference workload through the real writer: the report reproduces the
// generator's ground truth, stays far below 20 bytes per card-tick, and rollups change nothing.
#include "core/timezone.hpp"
#include "fleet_workload.hpp"
#include "report/build.hpp"
#include "store/reader.hpp"
#include "store/writer.hpp"
#include "temp_db.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace gua {
namespace {

TEST(Fleet, ReportReproducesGroundTruthCompactly) {
    testing::TempDb t;
    bench::FleetOptions o;
    o.ticks = 2 * 2880;
    o.measurement_faults = false; // the truth counts whole card-ticks by their utilization
    bench::FleetTruth truth;
    {
        store::Writer w(
            t.db, store::RunInfo{"fleet", "1", "synthetic:fleet", o.interval_us, 10, o.start});
        truth = bench::generate_fleet(o, [&](const telemetry::Tick& tick) { w.write(tick); });
        w.finish(o.start + o.ticks * o.interval_us);
    }
    report::BuildOptions b;
    b.from = o.start + 17 * k_us_per_minute;
    b.to = o.start + o.ticks * o.interval_us;
    const report::ReportModel m = report::build_report(t.db, b, TimeZone::load("UTC").value());
    store::Reader reader(t.db);
    audit::WindowAccumulator raw(audit::Thresholds{}, 0, [](TimeUs) { return std::pair{0, 0}; });
    reader.scan(b.from, b.to, [&](const audit::CardTick& c) { raw.add(c); });
    EXPECT_EQ(m.samples, raw.ticks());
    EXPECT_EQ(m.headline.idle_held_hours, to_hours(raw.states().idle_held));

    b.from = o.start;
    const report::ReportModel all = report::build_report(t.db, b, TimeZone::load("UTC").value());
    const double n = static_cast<double>(truth.active + truth.idle_held + truth.truly_idle);
    EXPECT_EQ(all.samples, static_cast<std::uint64_t>(n));
    EXPECT_DOUBLE_EQ(all.headline.active, static_cast<double>(truth.active) / n);
    EXPECT_DOUBLE_EQ(all.headline.idle_held, static_cast<double>(truth.idle_held) / n);
    EXPECT_DOUBLE_EQ(all.headline.truly_idle, static_cast<double>(truth.truly_idle) / n);

    t.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    const auto bytes = static_cast<double>(std::filesystem::file_size(t.path));
    EXPECT_LT(bytes / n, 20.0);
}

} // namespace
} // namespace gua
