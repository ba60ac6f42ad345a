// SPDX-License-Identifier: Apache-2.0
// End to end: `gua start/status/stop` in background mode for real (a --root tree without
// systemd), recording from the fake NVML library.
#include "ops/harness.hpp"

#include <gtest/gtest.h>

#include <cstdio>

namespace gua::ops::testing {
namespace {

using nlohmann::json;
using Background = FakeGpuTest;

TEST_F(Background, StartStatusStopRecordsAndFlushes) {
    const GuaRun started = start_background();
    ASSERT_EQ(started.exit_code, 0) << started.out << started.err;
    EXPECT_TRUE(contains(started.out, "systemd is not running here")) << started.out;
    EXPECT_TRUE(contains(started.out, "gua is recording in the background")) << started.out;
    EXPECT_TRUE(contains(started.out, "It runs as root")) << started.out;
    EXPECT_TRUE(contains(started.out, "\nIt will NOT start again after a reboot.\n"))
        << started.out;
    EXPECT_TRUE(contains(started.out, "\n  @reboot " + std::string(GUA_BINARY) + " start --root " +
                                          fs::canonical(root()).string() + " --interval 1s\n"))
        << started.out;
    const PidFileInfo pid = read_pid_file(pid_file().string());
    ASSERT_EQ(pid.status, PidFileInfo::Status::running);
    EXPECT_TRUE(contains(read_text(config_file()), "[thresholds]"));
    EXPECT_TRUE(contains(read_text(log_file()), "gua daemon started"));
    EXPECT_TRUE(contains(read_text(log_file()), "gpus=2 interval=1s"));

    // Four seconds of ticks, so that the start below weighs at most a quarter of one tick.
    const json status = status_after_first_tick(4);
    EXPECT_EQ(status["running"], true);
    EXPECT_EQ(status["mode"], "background daemon");
    EXPECT_EQ(status["pid"], pid.id.pid);
    EXPECT_EQ(status["database"]["interval_s"], 1.0);
    ASSERT_EQ(status["database"]["gpus"].size(), 2u);
    EXPECT_EQ(status["database"]["gpus"][0]["name"], "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(status["database"]["gpus"][1]["name"], "NVIDIA A100-SXM4-40GB");
    EXPECT_TRUE(status["database"]["problems"].empty()) << status.dump(2);
    ASSERT_FALSE(status["last_hour"].is_null());
    // One card busy, one idle, over the same ticks. The fake driver's rings start empty with the
    // daemon: the first span before the busy card's first entry counts as idle time the ring
    // could hold, which moved a two-tick split by about 1 % (more on a loaded machine, where
    // the first tick starts late); over four seconds of ticks it stays well inside 1 %.
    const double active = status["last_hour"]["active"].get<double>();
    EXPECT_NEAR(active, 0.5, 1e-2);
    EXPECT_NEAR(status["last_hour"]["truly_idle"].get<double>(), 1.0 - active, 1e-9);

    const GuaRun text = gua("status");
    EXPECT_EQ(text.exit_code, 0);
    EXPECT_TRUE(
        contains(text.out, "gua is running: background daemon, pid " + std::to_string(pid.id.pid)))
        << text.out;
    EXPECT_TRUE(contains(text.out, "0 NVIDIA H100 80GB HBM3")) << text.out;
    char shown[32];
    std::snprintf(shown, sizeof shown, "last hour   active %.1f %%", active * 100);
    EXPECT_TRUE(contains(text.out, shown)) << text.out;

    const GuaRun stopped = gua("stop");
    ASSERT_EQ(stopped.exit_code, 0) << stopped.out << stopped.err;
    EXPECT_TRUE(contains(stopped.out, "gua daemon stopped after")) << stopped.out;
    EXPECT_FALSE(is_alive(pid.id));
    EXPECT_FALSE(fs::exists(pid_file()));
    EXPECT_TRUE(contains(read_text(log_file()), "card-tick rows written"));
    const GuaRun after = gua("status", {"--format", "json"});
    EXPECT_EQ(after.exit_code, 1);
    EXPECT_EQ(json::parse(after.out)["running"], false);
    EXPECT_EQ(json::parse(after.out)["schema_version"], 1);
    // Stopped cleanly (a final flush recorded), every reading succeeded. The stop's partial
    // tick can end before the busy card's ring holds a new sample (a loaded machine): that tick
    // is flagged as unmeasured, never guessed; any other problem fails.
    const json after_status = json::parse(after.out);
    for (const json& problem : after_status["database"]["problems"]) {
        EXPECT_TRUE(contains(problem.get<std::string>(), "): no utilization reading in 1 ticks"))
            << after.out;
    }
}

TEST_F(Background, DoubleStartSaysAlreadyRunning) {
    ASSERT_EQ(start_background().exit_code, 0);
    const PidFileInfo first = read_pid_file(pid_file().string());
    const GuaRun again = start_background();
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_TRUE(contains(again.out, "gua is already running (background daemon, pid " +
                                        std::to_string(first.id.pid)))
        << again.out;
    EXPECT_TRUE(contains(again.out, "Nothing to do.")) << again.out;
    const PidFileInfo second = read_pid_file(pid_file().string());
    EXPECT_EQ(second.id.pid, first.id.pid);
    EXPECT_EQ(second.id.start_ticks, first.id.start_ticks);
    EXPECT_EQ(gua("stop").exit_code, 0);
}

TEST_F(Background, DryRunPrintsTheStepsAndChangesNothing) {
    const GuaRun dry = gua("start", {"--dry-run", "--interval", "1s"}, fake_env());
    ASSERT_EQ(dry.exit_code, 0) << dry.err;
    EXPECT_TRUE(contains(dry.out, "- create directory " + state_dir().string())) << dry.out;
    EXPECT_TRUE(contains(dry.out, "- write " + config_file().string())) << dry.out;
    EXPECT_TRUE(contains(dry.out, "- start in the background: " + std::string(GUA_BINARY) +
                                      " daemon --db " + db().string()))
        << dry.out;
    EXPECT_TRUE(contains(dry.out, "Nothing was changed (dry run).")) << dry.out;
    EXPECT_FALSE(fs::exists(state_dir()));
    EXPECT_FALSE(fs::exists(config_file()));
}

TEST_F(Background, StopWhenNotRunningSaysSoAndSucceeds) {
    const GuaRun stopped = gua("stop");
    EXPECT_EQ(stopped.exit_code, 0);
    EXPECT_TRUE(contains(stopped.out, "gua is not running")) << stopped.out;
    EXPECT_TRUE(contains(stopped.out, "nothing to stop")) << stopped.out;
    EXPECT_FALSE(fs::exists(state_dir()));
}

TEST_F(Background, StartWithoutDriverFailsWithExitCode3AndLeavesNoPidFile) {
    const GuaRun started = gua("start", {"--interval", "1s"},
                               {{"GUA_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"}});
    EXPECT_EQ(started.exit_code, 3) << started.out << started.err;
    EXPECT_TRUE(contains(started.out, "the daemon exited with code 3")) << started.out;
    EXPECT_TRUE(contains(started.out, "not found")) << started.out;
    EXPECT_TRUE(contains(started.err, "see " + log_file().string())) << started.err;
    EXPECT_FALSE(fs::exists(pid_file()));
    EXPECT_EQ(gua("status").exit_code, 1);
}

TEST_F(Background, ForegroundDaemonIsSeenAndStopped) {
    fs::create_directories(state_dir());
    start_foreground({"daemon", "--db", db().string(), "--interval", "1s", "-q"});
    const json status = status_after_first_tick();
    EXPECT_EQ(status["mode"], "foreground daemon") << status.dump(2);
    const GuaRun stopped = gua("stop");
    EXPECT_EQ(stopped.exit_code, 0) << stopped.out << stopped.err;
    EXPECT_TRUE(contains(stopped.out, "stop the foreground daemon")) << stopped.out;
    EXPECT_TRUE(contains(stopped.out, "final flush at")) << stopped.out;
    EXPECT_EQ(gua("status").exit_code, 1);
}

} // namespace
} // namespace gua::ops::testing
