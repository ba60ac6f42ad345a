// SPDX-License-Identifier: Apache-2.0
// Real and simulated clocks.
#include "core/clock.hpp"

#include "core/fatal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <limits>
#include <optional>
#include <utility>

namespace gua {

namespace {

std::optional<double> read_seconds(const std::string& path) {
    std::ifstream in(path);
    double s = 0;
    if (in >> s) {
        return s;
    }
    return std::nullopt;
}

// Write and rename, so that the fake library never reads a half-written number.
void write_seconds(const std::string& path, double seconds) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << fmt::format("{:.6f}", seconds);
        if (!out.flush()) {
            throw Fatal(fmt::format("{}: cannot write the scenario clock", tmp));
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        throw Fatal(fmt::format("{}: cannot replace the scenario clock", path));
    }
}

void nap_ms(long ms) {
    timespec ts{0, ms * 1000 * 1000};
    nanosleep(&ts, nullptr);
}

} // namespace

TimeUs SystemClock::wall_now() {
    return gua::wall_now();
}

std::int64_t SystemClock::mono_now() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * k_us_per_second + ts.tv_nsec / 1000;
}

std::optional<std::int64_t> SystemClock::boot_now() {
    timespec ts{};
    if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0) {
        return std::nullopt;
    }
    return static_cast<std::int64_t>(ts.tv_sec) * k_us_per_second + ts.tv_nsec / 1000;
}

void SystemClock::sleep_until(std::int64_t deadline, const std::atomic<bool>& stop) {
    while (!stop.load(std::memory_order_relaxed)) {
        const std::int64_t now = mono_now();
        if (now >= deadline) {
            return;
        }
        const std::int64_t step = std::min<std::int64_t>(deadline - now, 100 * k_us_per_ms);
        timespec ts{static_cast<time_t>(step / k_us_per_second),
                    static_cast<long>((step % k_us_per_second) * 1000)};
        nanosleep(&ts, nullptr);
    }
}

void SimulatedClock::sleep_until(std::int64_t deadline, const std::atomic<bool>& stop) {
    if (!stop.load(std::memory_order_relaxed)) {
        m_mono = std::max(m_mono, deadline);
    }
}

ScenarioFileClock::ScenarioFileClock(std::string path)
    : m_path(std::move(path)), m_wall_start(gua::wall_now()) {
    const std::optional<double> start = read_seconds(m_path);
    if (!start) {
        throw Fatal(fmt::format("{}: GUA_TEST_CLOCK_FILE does not hold scenario seconds", m_path));
    }
    m_start_s = *start;
}

void ScenarioFileClock::move_to(std::int64_t mono) {
    m_mono = std::max(m_mono, mono);
    write_seconds(m_path, m_start_s + static_cast<double>(m_mono) / 1e6);
}

void ScenarioFileClock::sleep_until(std::int64_t deadline, const std::atomic<bool>& stop) {
    const std::optional<double> step = read_seconds(m_path + ".wall_step");
    m_wall_step_us = step ? std::llround(*step * 1e6) : 0;
    const std::string hold_path = m_path + ".hold";
    while (!stop.load(std::memory_order_relaxed)) {
        const std::optional<double> hold = read_seconds(hold_path);
        const std::int64_t hold_mono = hold ? std::llround((*hold - m_start_s) * 1e6)
                                            : std::numeric_limits<std::int64_t>::max();
        if (hold_mono >= deadline) {
            move_to(deadline);
            return;
        }
        if (hold_mono > m_mono) {
            move_to(hold_mono);
        }
        nap_ms(1);
    }
}

std::unique_ptr<Clock> clock_from_environment() {
    const char* path = std::getenv("GUA_TEST_CLOCK_FILE");
    if (path != nullptr && *path != '\0') {
        return std::make_unique<ScenarioFileClock>(path);
    }
    return std::make_unique<SystemClock>();
}

} // namespace gua
