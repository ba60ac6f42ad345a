// SPDX-License-Identifier: Apache-2.0
// The scenario clock seam: simulated time that writes scenario seconds to the fake driver's
// clock file on every jump, and holds at a time a test names.
#include "core/clock.hpp"
#include "core/fatal.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace gua {
namespace {

double read_seconds(const std::string& path) {
    std::ifstream in(path);
    double s = -1;
    in >> s;
    return s;
}

void write_text(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::trunc) << text;
}

TEST(ScenarioFileClock, JumpsToTheDeadlineAndWritesScenarioTime) {
    test::TempDir dir;
    const std::string clock = dir.file("clock");
    write_text(clock, "600");
    const TimeUs before = wall_now();
    ScenarioFileClock c(clock);
    const TimeUs wall0 = c.wall_now();
    EXPECT_GE(wall0, before);
    EXPECT_EQ(c.mono_now(), 0);
    std::atomic<bool> stop{false};
    const auto began = std::chrono::steady_clock::now();
    c.sleep_until(30 * k_us_per_second, stop);
    EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(1));
    EXPECT_EQ(c.mono_now(), 30 * k_us_per_second);
    EXPECT_EQ(c.wall_now(), wall0 + 30 * k_us_per_second);
    EXPECT_DOUBLE_EQ(read_seconds(clock), 630.0);
    c.sleep_until(10 * k_us_per_second, stop); // a past deadline does not move time back
    EXPECT_EQ(c.mono_now(), 30 * k_us_per_second);
    EXPECT_DOUBLE_EQ(read_seconds(clock), 630.0);
}

TEST(ScenarioFileClock, WaitsAtAHoldUntilItIsLifted) {
    test::TempDir dir;
    const std::string clock = dir.file("clock");
    write_text(clock, "0");
    write_text(clock + ".hold", "12.5");
    ScenarioFileClock c(clock);
    std::atomic<bool> stop{false};
    std::thread sleeper([&] { c.sleep_until(20 * k_us_per_second, stop); });
    bool held = false;
    for (int i = 0; i < 500 && !held; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        held = read_seconds(clock) == 12.5;
    }
    EXPECT_TRUE(held) << "the clock advances to the hold and waits there";
    std::filesystem::remove(clock + ".hold");
    sleeper.join();
    EXPECT_DOUBLE_EQ(read_seconds(clock), 20.0);
    EXPECT_EQ(c.mono_now(), 20 * k_us_per_second);
}

TEST(ScenarioFileClock, StopEndsAWaitAtAHold) {
    test::TempDir dir;
    const std::string clock = dir.file("clock");
    write_text(clock, "0");
    write_text(clock + ".hold", "1");
    ScenarioFileClock c(clock);
    std::atomic<bool> stop{false};
    std::thread sleeper([&] { c.sleep_until(5 * k_us_per_second, stop); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stop = true;
    sleeper.join();
    EXPECT_EQ(c.mono_now(), k_us_per_second) << "stopped at the hold, not at the deadline";
}

TEST(ScenarioFileClock, AnUnreadableFileIsAFatalError) {
    test::TempDir dir;
    EXPECT_THROW(ScenarioFileClock(dir.file("missing")), Fatal);
    write_text(dir.file("junk"), "soon");
    EXPECT_THROW(ScenarioFileClock(dir.file("junk")), Fatal);
}

TEST(ClockFromEnvironment, OnlyTheTestVariableSelectsTheScenarioClock) {
    test::TempDir dir;
    write_text(dir.file("clock"), "42");
    ::setenv("GUA_TEST_CLOCK_FILE", dir.file("clock").c_str(), 1);
    const std::unique_ptr<Clock> scenario = clock_from_environment();
    ::unsetenv("GUA_TEST_CLOCK_FILE");
    EXPECT_NE(dynamic_cast<ScenarioFileClock*>(scenario.get()), nullptr);
    const std::unique_ptr<Clock> real = clock_from_environment();
    EXPECT_NE(dynamic_cast<SystemClock*>(real.get()), nullptr);
}

} // namespace
} // namespace gua
