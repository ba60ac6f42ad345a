// SPDX-License-Identifier: Apache-2.0
// Fault matrix, driver: the NVML faults the fake driver plays (tests/fake_nvml/README.md) that
// the end-to-end suites do not already run the daemon through, all at once on five cards, and
// init failures other than the version mismatch. Recording goes on, nothing logged is lost, and
// the report accounts for all recorded time — a fault is unmeasured time, never a guess.
#include "fault/fault_harness.hpp"

#include <csignal>

namespace gua::fault {
namespace nvml_faults_test { // named after the file: unique in a unity batch

class FaultMatrixNvml : public FaultTest {};

TEST_F(FaultMatrixNvml, EveryDriverFaultAtOnceKeepsRecordingAndAccounting) {
    const int me = static_cast<int>(getpid());
    json busy = {{"util", e2e::square_wave(7, 13, 100000, 95, 4)}};
    json junk = busy;
    junk["util"] = {{0, 40}, {30, 150}, {31, 40}}; // one period over 100 %: junk
    junk["ring_size"] = 6;                         // 1 s of history: polls overflow it
    junk["quirks"] = {{"include_last_seen", true},
                      {"unsorted", true},
                      {"zero_timestamp_entry", true},
                      {"dirty_upper_bytes", true}};
    junk["process_util_junk"] = true;
    junk["process_list_growth"] = {{"extra", 3}, {"calls", 2}};
    json unsupported = busy;
    unsupported["not_supported"] = {"nvmlDeviceGetSamples", "nvmlDeviceGetPowerUsage",
                                    "nvmlDeviceGetProcessUtilization"};
    json no_permission = busy;
    no_permission["no_permission"] = true;
    const json scenario = {
        {"abi", {{"missing_symbols", {"nvmlDeviceGetClockInfo"}}}},
        {"devices", {busy, junk, unsupported, busy, no_permission}},
        {"processes",
         {e2e::holder(0, 8000, 90, me), e2e::holder(1, 8000, 40, me), e2e::holder(2, 8000, 90, me),
          e2e::holder(3, 8000, 90, me)}},
        {"faults",
         {// card 0: failing ring and process-list reads for a minute
          {{"function", "nvmlDeviceGetSamples"},
           {"device", 0},
           {"from", 60},
           {"to", 120},
           {"error", 999}},
          {{"function", "nvmlDeviceGetComputeRunningProcesses"},
           {"device", 0},
           {"from", 90},
           {"to", 150},
           {"error", 999}},
          // card 3: off the bus for a minute
          {{"function", "*"}, {"device", 3}, {"from", 200}, {"to", 260}, {"error", 15}}}}};
    write_scenario(scenario);
    use_simulated_clock();
    const test::RunResult r = run_daemon({"--interval", "10s", "--ticks", "40"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(ticks_per_run(), std::vector<std::int64_t>{40});
    EXPECT_EQ(logged_ticks(r.err), 40);

    test::RawDb raw(db());
    const auto scalar = [&raw](const std::string& sql) { return std::stod(raw.one(sql)); };
    // The card without permission is not recorded; the four others have every tick.
    EXPECT_EQ(scalar("SELECT count(*) FROM gpu"), 4);
    EXPECT_EQ(scalar("SELECT count(*) FROM card_tick"), 4 * 40)
        << raw.one("SELECT group_concat(g.idx || ':' || n, ' ') FROM (SELECT gpu_id, count(*) AS n "
                   "FROM card_tick GROUP BY gpu_id) JOIN gpu g ON g.id = gpu_id")
        << r.err;
    const auto of = [](int idx) {
        return " FROM card_tick c JOIN gpu g ON g.id = c.gpu_id WHERE g.idx = " +
               std::to_string(idx);
    };
    // Failed ring reads, the lost GPU and junk are unmeasured time; the clock symbol that answers
    // FUNCTION_NOT_FOUND is missing (NULL), not 0.
    EXPECT_GT(scalar("SELECT sum(c.unmeasured_us)" + of(0)), 0);
    EXPECT_GE(scalar("SELECT sum(c.unmeasured_us)" + of(3)), 50e6);
    EXPECT_GT(scalar("SELECT sum(c.unmeasured_us)" + of(1)), 0);
    EXPECT_EQ(scalar("SELECT count(*) FROM card_tick WHERE sm_clock_mhz IS NOT NULL"), 0);
    EXPECT_EQ(scalar("SELECT count(*) FROM card_tick WHERE temperature_c IS NULL"), 5)
        << "card 3's ticks [200, 210) … [240, 250): every poll of theirs (every 5 s, the last at "
           "the tick's end) falls in the fault's [200, 260); the tick ending at 260 reads again";
    // The card without a sample ring is measured by snapshots (utilization source 1).
    EXPECT_EQ(scalar("SELECT count(*)" + of(2) + " AND c.util_source != 1"), 0);
    expect_sound_and_consistent();
}

// nvmlInit failing with other codes than the version mismatch (which is retried, see
// DaemonE2EFaults): one line naming the driver's error, exit code 3, no database.
TEST_F(FaultMatrixNvml, InitFailuresAreOneLineExitCode3WithoutADatabase) {
    for (const int error : {9, 999}) {
        write_scenario({{"init_error", error}, {"devices", {json::object()}}});
        const test::RunResult r = run_daemon({"--interval", "200ms", "--ticks", "1"});
        EXPECT_EQ(r.exit_code, 3) << r.err;
        EXPECT_TRUE(r.err.starts_with("gua: ")) << r.err;
        EXPECT_EQ(test::count_of(r.err, "\n"), 1) << r.err;
        EXPECT_FALSE(e2e::file_exists(db())) << "error " << error;
    }
}

} // namespace nvml_faults_test
} // namespace gua::fault
