// SPDX-License-Identifier: Apache-2.0
// End to end: cards that come and go under the real daemon on the simulated clock. A card lost
// when the daemon starts and back 40 s later is in the report with its absent time unmeasured,
// whether the database knew it from an earlier run or not (then a stand-in holds its index); the
// daemon's log names the index NVML could not open and its error.
#include "core/time.hpp"
#include "e2e/daemon_e2e.hpp"
#include "store/database.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"

#include <fmt/format.h>

namespace gua::e2e::daemon_devices_test {
namespace {

constexpr double k_start_s = 1000; // scenario time of the daemon's first poll
constexpr double k_lost_s = 40;    // GPU 1 answers GPU_IS_LOST to every call for this long
constexpr double k_interval_s = 10;
constexpr int k_ticks = 10;

class DaemonDevices : public DaemonTest {
  protected:
    /// Two busy cards; GPU 1 is lost from before the daemon starts until k_lost_s after.
    void write_lost_at_start() const {
        write_scenario(
            {{"devices",
              {{{"uuid", "GPU-0"}, {"util", {{0, 60}}}}, {{"uuid", "GPU-1"}, {"util", {{0, 30}}}}}},
             {"faults",
              {{{"function", "*"},
                {"device", 1},
                {"from", 0},
                {"to", k_start_s + k_lost_s},
                {"error", 15}}}}});
    }

    /// An earlier run, two days ago (outside the report's last day), that saw both cards.
    void record_earlier_run() const {
        store::Database database(db(), store::OpenMode::create);
        store::migrate_to(database, store::k_schema_version);
        const TimeUs t0 = wall_now() - 2 * 24 * k_us_per_hour;
        store::Writer writer(database, store::RunInfo{"host", "560.35.05", "nvml",
                                                      30 * k_us_per_second, 10.0, t0, 100, false});
        telemetry::Tick tick;
        tick.t0 = t0;
        tick.duration_us = 30 * k_us_per_second;
        for (int i = 0; i < 2; ++i) {
            telemetry::CardTickRecord card;
            card.device.uuid = fmt::format("GPU-{}", i);
            card.device.index = i;
            card.device.name = "NVIDIA H100 80GB HBM3";
            tick.cards.push_back(card);
        }
        writer.write(tick);
        writer.finish(t0 + tick.duration_us);
    }

    /// `gua report` over the simulated run (its ticks lie up to k_run_s ahead of the real clock).
    test::RunResult report_of(const std::string& format) const {
        return test::run_gua({"report", "--db", db(), "--from",
                              format_iso8601(wall_now() - k_us_per_hour), "--to",
                              format_iso8601(wall_now() + k_us_per_hour), "--format", format});
    }
    json report_json() const {
        const test::RunResult r = report_of("json");
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.exit_code == 0 ? json::parse(r.out) : json::object();
    }

    test::RunResult record(double interval_s = k_interval_s, int ticks = k_ticks) {
        set_clock(k_start_s);
        set_env("GUA_TEST_CLOCK_FILE", path("clock"));
        return run_daemon({"--interval", fmt::format("{}s", interval_s), "--ticks",
                           std::to_string(ticks), "--quiet"},
                          FakeVariant::modern, std::chrono::seconds(60));
    }
};

/// The same at the 1 s and 30 s ticks of the ground-truth tests.
class DaemonDevicesAt : public DaemonDevices, public ::testing::WithParamInterface<double> {
  protected:
    /// GPU 1 lost for the first 40 s of a 120 s run: both cards in the report, GPU 1's 40 s
    /// unmeasured with their reason (utilization unknown), the rest of its time measured.
    void check_forty_seconds_unmeasured();
};

constexpr double k_run_s = k_interval_s * k_ticks;

TEST_F(DaemonDevices, KnownCardLostAtStartIsInTheReportWithItsAbsentTimeUnmeasured) {
    record_earlier_run();
    write_lost_at_start();
    const test::RunResult r = record();
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("NVML could not open GPU 1: nvmlDeviceGetHandleByIndex: GPU is lost "
                         "(error 15)"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("GPU-1 (NVIDIA H100 80GB HBM3), the card recorded at that index before, "
                         "is recorded as lost"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("NVML opens GPU 1 again"), std::string::npos) << r.err;

    // The truth, from the scenario: GPU 1 was unreachable for the first k_lost_s of the run and
    // busy at 30 % after; GPU 0 was busy at 60 % all along.
    const json report = report_json();
    const json gpu0 = gpu_row(report, 0);
    const json gpu1 = gpu_row(report, 1);
    EXPECT_NEAR(seconds(gpu1["provenance"]["card_gpu_hours"]), k_run_s, 0.01);
    EXPECT_NEAR(seconds(gpu1["provenance"]["unmeasured_gpu_hours"]), k_lost_s, 0.01);
    EXPECT_NEAR(seconds(gpu1["provenance"]["utilization_unknown_gpu_hours"]), k_lost_s, 0.01)
        << "its reason: utilization unknown (GPU lost)";
    EXPECT_NEAR(seconds(gpu1["states"]["active_gpu_hours"]), k_run_s - k_lost_s, 0.01);
    EXPECT_NEAR(seconds(gpu0["provenance"]["unmeasured_gpu_hours"]), 0.0, 0.01);
    EXPECT_NEAR(seconds(gpu0["states"]["active_gpu_hours"]), k_run_s, 0.01);

    const test::RunResult text = report_of("text");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("utilization unknown (ring samples lost, GPU lost or readings "
                            "failed)"),
              std::string::npos)
        << text.out;
}

// Never recorded before: a stand-in holds its index while it does not open, and the card takes
// the stand-in's row when it opens, so the report shows both cards over the whole run, GPU 1's
// first 40 s unmeasured (utilization unknown) and the rest measured.
TEST_F(DaemonDevices, CardNeverSeenBeforeHasItsUnopenedTimeUnmeasured) {
    write_lost_at_start();
    const test::RunResult r = record();
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("NVML could not open GPU 1: nvmlDeviceGetHandleByIndex: GPU is lost "
                         "(error 15)"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("NVML: GPU 1 did not open and was never recorded; its time is recorded "
                         "as unmeasured under unopened-1 until it opens"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("NVML: GPU 1 (GPU-1) opened; it takes over unopened-1"), std::string::npos)
        << r.err;
    EXPECT_NEAR(measured_seconds(1), k_run_s - k_lost_s, 0.01);
    EXPECT_NEAR(measured_seconds(0), k_run_s, 0.01);
    EXPECT_NEAR(recorded_seconds(1), k_run_s, 0.01);
    const json report = report_json();
    ASSERT_EQ(report["gpus"].size(), 2U) << "the stand-in's row became GPU-1's";
    const json gpu1 = gpu_row(report, 1);
    EXPECT_EQ(gpu1["uuid"], "GPU-1");
    EXPECT_NEAR(seconds(gpu1["provenance"]["unmeasured_gpu_hours"]), k_lost_s, 0.01);
    EXPECT_NEAR(seconds(gpu1["provenance"]["utilization_unknown_gpu_hours"]), k_lost_s, 0.01);
    EXPECT_NEAR(seconds(gpu1["states"]["active_gpu_hours"]), k_run_s - k_lost_s, 0.01);
}

// A card that never opens during the run stays in the report as its stand-in, all unmeasured.
TEST_F(DaemonDevices, CardThatNeverOpensIsInTheReportAllUnmeasured) {
    write_scenario(
        {{"devices",
          {{{"uuid", "GPU-0"}, {"util", {{0, 60}}}}, {{"uuid", "GPU-1"}, {"util", {{0, 30}}}}}},
         {"faults",
          {{{"function", "*"}, {"device", 1}, {"from", 0}, {"to", 1e9}, {"error", 15}}}}});
    const test::RunResult r = record();
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json report = report_json();
    ASSERT_EQ(report["gpus"].size(), 2U);
    const json gpu1 = gpu_row(report, 1);
    EXPECT_EQ(gpu1["uuid"], "unopened-1");
    EXPECT_EQ(gpu1["model"], "(NVML could not open it)");
    EXPECT_NEAR(seconds(gpu1["provenance"]["card_gpu_hours"]), k_run_s, 0.01);
    EXPECT_NEAR(seconds(gpu1["provenance"]["unmeasured_gpu_hours"]), k_run_s, 0.01);
    EXPECT_NEAR(seconds(gpu_row(report, 0)["states"]["active_gpu_hours"]), k_run_s, 0.01);
}

// A card the database knew, lost when the daemon starts and back 40 s later, at 1 s and 30 s
// ticks over 120 s: both cards in the report, the card's 40 s unmeasured with their reason
// (utilization unknown), the rest of its time measured.
TEST_P(DaemonDevicesAt, KnownCardLostAtStartHasItsFortySecondsUnmeasured) {
    record_earlier_run();
    check_forty_seconds_unmeasured();
}

// The same for a card never recorded before (its stand-in's row becomes the card's).
TEST_P(DaemonDevicesAt, NeverSeenCardLostAtStartHasItsFortySecondsUnmeasured) {
    check_forty_seconds_unmeasured();
}

void DaemonDevicesAt::check_forty_seconds_unmeasured() {
    constexpr double k_run = 120;
    write_lost_at_start();
    const test::RunResult r = record(GetParam(), static_cast<int>(k_run / GetParam()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json report = report_json();
    ASSERT_EQ(report["gpus"].size(), 2U);
    const json gpu0 = gpu_row(report, 0);
    const json gpu1 = gpu_row(report, 1);
    EXPECT_EQ(gpu1["uuid"], "GPU-1");
    EXPECT_NEAR(seconds(gpu1["provenance"]["card_gpu_hours"]), k_run, 0.01);
    EXPECT_NEAR(seconds(gpu1["provenance"]["unmeasured_gpu_hours"]), k_lost_s, 0.01);
    EXPECT_NEAR(seconds(gpu1["provenance"]["utilization_unknown_gpu_hours"]), k_lost_s, 0.01);
    EXPECT_NEAR(seconds(gpu1["states"]["active_gpu_hours"]), k_run - k_lost_s, 0.01);
    EXPECT_NEAR(seconds(gpu0["states"]["active_gpu_hours"]), k_run, 0.01);
    std::printf("[ devices  ] %g s ticks: GPU 1 unmeasured %.2f s (utilization unknown %.2f s), "
                "active %.2f s of %.2f s\n",
                GetParam(), seconds(gpu1["provenance"]["unmeasured_gpu_hours"]),
                seconds(gpu1["provenance"]["utilization_unknown_gpu_hours"]),
                seconds(gpu1["states"]["active_gpu_hours"]),
                seconds(gpu1["provenance"]["card_gpu_hours"]));
}

INSTANTIATE_TEST_SUITE_P(Intervals, DaemonDevicesAt, ::testing::Values(1.0, 30.0),
                         [](const ::testing::TestParamInfo<double>& p) {
                             return fmt::format("Every{}s", p.param);
                         });

} // namespace
} // namespace gua::e2e::daemon_devices_test
