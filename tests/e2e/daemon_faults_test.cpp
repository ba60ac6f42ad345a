// SPDX-License-Identifier: Apache-2.0
// End to end: the daemon survives every driver fault — no library, a driver/library version
// mismatch, a GPU falling off the bus, a failing reading, no GPU at all — keeps the other cards
// recorded and says loudly when it records nothing.
#include "e2e/daemon_e2e.hpp"
#include "ops/lock_holder.hpp"

#include <csignal>
#include <unistd.h>

namespace gua::e2e {
namespace {

class DaemonE2EFaults : public DaemonTest {};

constexpr const char* k_lost_uuid = "GPU-00000000-0000-0000-0000-000000000001";

json three_held_cards() {
    const int me = static_cast<int>(getpid());
    return {
        {"devices", {{{"util", {{0, 80}}}}, {{"util", {{0, 80}}}}, {{"util", {{0, 80}}}}}},
        {"processes", {holder(0, 8000, 80, me), holder(1, 8000, 80, me), holder(2, 8000, 80, me)}}};
}

void expect_one_line_error(const test::RunResult& r, const std::string& start) {
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(r.err.starts_with("gua: " + start)) << r.err;
    EXPECT_EQ(test::count_of(r.err, "\n"), 1) << r.err;
}

TEST_F(DaemonE2EFaults, MissingLibraryIsOneLineExitCode3AndNoDatabase) {
    write_scenario(three_held_cards());
    const std::string missing = path("nowhere/libnvidia-ml.so.1");
    // By flag…
    test::RunResult r = test::run_gua({"daemon", "--db", db(), "--config", config_path(),
                                       "--nvml-library", missing, "--ticks", "1"},
                                      env());
    EXPECT_EQ(r.exit_code, 3);
    expect_one_line_error(r, "NVML library " + missing + " not found");
    EXPECT_NE(r.err.find("gua demo"), std::string::npos) << r.err;
    // …and by environment.
    std::map<std::string, std::string> e = env();
    e["GUA_NVML_LIBRARY"] = missing;
    r = test::run_gua({"daemon", "--db", db(), "--config", config_path(), "--ticks", "1"}, e);
    EXPECT_EQ(r.exit_code, 3);
    expect_one_line_error(r, "NVML library " + missing + " not found");
    // NVML is probed before anything is created.
    EXPECT_FALSE(file_exists(db()));
    // Bad usage is a different exit code.
    EXPECT_EQ(test::run_gua({"daemon", "--db", db(), "--interval", "1ms"}).exit_code, 2);
}

TEST_F(DaemonE2EFaults, VersionMismatchIsLoggedAndRetriedUntilSigterm) {
    json scenario = three_held_cards();
    scenario["init_error"] = 18; // NVML_ERROR_LIB_RM_VERSION_MISMATCH
    write_scenario(scenario);
    auto daemon = start_daemon({"--interval", "200ms"});
    ASSERT_TRUE(daemon->wait_for("retrying in 5s")) << daemon->err();
    EXPECT_NE(daemon->err().find("NVIDIA driver/library version mismatch"), std::string::npos)
        << daemon->err();
    EXPECT_TRUE(daemon->running());
    daemon->signal(SIGTERM);
    const std::optional<int> code = daemon->wait_exit(5s);
    ASSERT_TRUE(code.has_value()) << "SIGTERM did not end the retry wait";
    EXPECT_EQ(*code, 0) << daemon->err();
    EXPECT_NE(daemon->err().find("stopped while waiting for NVML"), std::string::npos)
        << daemon->err();
    EXPECT_FALSE(file_exists(db())) << "no database before NVML was usable";
}

// The fake reads its scenario at every nvmlInit while it is not initialized, so rewriting the
// scenario without init_error is exactly "the driver was fixed" for the daemon's next retry.
TEST_F(DaemonE2EFaults, RecordingStartsOnceTheMismatchClears) {
    json scenario = three_held_cards();
    scenario["init_error"] = 18;
    write_scenario(scenario);
    auto daemon = start_daemon({"--interval", "200ms"});
    ASSERT_TRUE(daemon->wait_for("version mismatch")) << daemon->err();
    EXPECT_FALSE(file_exists(db()));
    scenario.erase("init_error");
    write_scenario(scenario);
    // The first retry comes 5 s after the first attempt.
    ASSERT_TRUE(daemon->wait_for("gua daemon started", 15s)) << daemon->err();
    ASSERT_TRUE(daemon->wait_for("tick 1 ", 10s)) << daemon->err();
    daemon->signal(SIGTERM);
    ASSERT_EQ(daemon->wait_exit(5s), 0) << daemon->err();
    EXPECT_EQ(test::count_of(daemon->err(), "version mismatch"), 1) << daemon->err();
    test::RawDb raw(db());
    EXPECT_GE(std::stoi(raw.one("SELECT count(*) FROM card_tick")), 6);
}

// GPU 1 falls off the bus (every call on it answers GPU_IS_LOST) while scenario time is in
// [100, 200); the test moves scenario time with the clock file and waits for each effect in the
// log. GPU 0's power reading fails with an unexpected error all along: NULL, counted, nothing else
// lost.
TEST_F(DaemonE2EFaults, LostGpuAndFailingReadingLeaveTheOtherCardsRecorded) {
    json scenario = three_held_cards();
    scenario["faults"] = {
        {{"function", "*"}, {"device", 1}, {"from", 100}, {"to", 200}, {"error", 15}},
        {{"function", "nvmlDeviceGetPowerUsage"}, {"device", 0}, {"error", 999}},
    };
    write_scenario(scenario);
    set_clock(10);
    auto daemon = start_daemon({"--interval", "200ms"});
    ASSERT_TRUE(daemon->wait_for("tick 1 ")) << daemon->err();
    set_clock(100);
    ASSERT_TRUE(daemon->wait_for(std::string(k_lost_uuid) + "=LOST")) << daemon->err();
    const int lost_lines_before = test::count_of(daemon->err(), "=LOST");
    ASSERT_TRUE(daemon->wait_for("=LOST", 15s, lost_lines_before + 2)) << daemon->err();
    set_clock(250);
    // Re-probed: GPU 1 is back in a tick line after its LOST lines.
    ASSERT_TRUE(test::poll_until(
        [&] {
            const std::string err = daemon->err();
            const std::size_t last_lost = err.rfind("=LOST");
            return err.find("GPU-1=", last_lost) != std::string::npos;
        },
        15s))
        << daemon->err();
    daemon->signal(SIGTERM);
    ASSERT_EQ(daemon->wait_exit(5s), 0) << daemon->err();
    const std::string log = daemon->err();
    EXPECT_NE(log.find("read errors"), std::string::npos) << log;

    test::RawDb raw(db());
    const auto count = [&](const std::string& where) {
        return std::stoi(raw.one("SELECT count(*) FROM card_tick c JOIN gpu g ON g.id = c.gpu_id "
                                 "WHERE " +
                                 where));
    };
    const int ticks = std::stoi(raw.one("SELECT count(DISTINCT t0_us) FROM card_tick"));
    // Every GPU has every tick: GPU 1's ticks while it was lost are recorded with nothing
    // measured (active 0, the whole tick unmeasured), so that coverage shows the gap.
    EXPECT_EQ(count("g.idx = 0"), ticks);
    EXPECT_EQ(count("g.idx = 2"), ticks);
    EXPECT_EQ(count("g.idx = 1"), ticks);
    EXPECT_GE(count("g.idx = 1 AND c.util_source = 0 AND c.active_us = 0"), 2);
    // The scenario clock stands still during this test, so the rings of GPUs 0 and 2 may get no
    // new entry while their snapshot says busy: such card-ticks are recorded wholly unmeasured,
    // never with a guessed value.
    EXPECT_EQ(count("g.idx != 1 AND c.util_source = 0 AND c.unmeasured_us < c.duration_us"), 0);
    EXPECT_EQ(raw.one("SELECT max(c.t0_us) FROM card_tick c JOIN gpu g ON g.id = c.gpu_id WHERE "
                      "g.idx = 1"),
              raw.one("SELECT max(t0_us) FROM card_tick"))
        << "GPU 1 is recorded again in the last tick";
    // The failing reading: NULL with an error count on GPU 0 only; its other readings are there.
    EXPECT_EQ(count("g.idx = 0 AND c.power_mw IS NULL AND c.read_errors >= 1"), ticks);
    EXPECT_EQ(count("g.idx = 0 AND c.temperature_c IS NOT NULL"), ticks);
    EXPECT_EQ(count("g.idx = 0 AND c.util_pct IS NULL AND c.unmeasured_us < c.duration_us"), 0);
    EXPECT_EQ(count("g.idx = 2 AND c.power_mw IS NOT NULL AND c.read_errors = 0"), ticks);
    EXPECT_EQ(count("g.idx = 1 AND c.read_errors != 0"), 0);
}

// A driver that shows no GPU: the daemon records nothing, and says so in its log once and to
// `gua status`/`gua doctor` (the alert they read from the database's locks) while it lasts.
TEST_F(DaemonE2EFaults, NoGpuIsAWarningInTheLogAndAnAlertForStatus) {
    write_scenario({{"devices", json::array()}});
    auto daemon = start_daemon({"--interval", "200ms"});
    ASSERT_TRUE(daemon->wait_for("tick 2 ")) << daemon->err();
    EXPECT_EQ(ops::database_alerts(db()), std::vector<ops::DaemonAlert>{ops::DaemonAlert::no_gpus});
    daemon->signal(SIGTERM);
    ASSERT_EQ(daemon->wait_exit(5s), 0) << daemon->err();
    const std::string log = daemon->err();
    EXPECT_EQ(test::count_of(log, "WARNING: NVML (driver "), 1) << log;
    EXPECT_NE(log.find("shows no GPU: nothing is recorded until one appears"), std::string::npos)
        << log;
    EXPECT_TRUE(ops::database_alerts(db()).empty()) << "withdrawn with the daemon";
    test::RawDb raw(db());
    EXPECT_EQ(raw.one("SELECT count(*) FROM card_tick"), "0");
}

} // namespace
} // namespace gua::e2e
