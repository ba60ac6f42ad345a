// SPDX-License-Identifier: Apache-2.0
// /proc/<pid>/stat reading, start times and SIGTERM-and-wait.
#include "ops/process.hpp"

#include "identity/proc_file.hpp"
#include "identity/proc_stat.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string_view>
#include <thread>
#include <unistd.h>

namespace gua::ops {

namespace {

constexpr std::size_t k_stat_max_bytes = 4096;
constexpr auto k_poll_interval = std::chrono::milliseconds(20);

} // namespace

std::optional<ProcessState> read_process(pid_t pid) {
    if (pid <= 0) {
        return std::nullopt;
    }
    const Result<std::string> text =
        identity::read_proc_file("/proc/" + std::to_string(pid) + "/stat", k_stat_max_bytes);
    if (!text) {
        return std::nullopt;
    }
    const Result<identity::ProcStat> stat = identity::parse_proc_stat(text.value());
    if (!stat) {
        return std::nullopt;
    }
    ProcessState s;
    s.comm = stat.value().comm;
    s.start_ticks = stat.value().start_ticks;
    const std::size_t close = text.value().rfind(')');
    if (close != std::string::npos && close + 2 < text.value().size()) {
        s.state = text.value()[close + 2];
    }
    return s;
}

std::optional<ProcessId> identify(pid_t pid) {
    const std::optional<ProcessState> s = read_process(pid);
    if (!s) {
        return std::nullopt;
    }
    return ProcessId{pid, s->start_ticks};
}

bool is_alive(const ProcessId& id) {
    const std::optional<ProcessState> s = read_process(id.pid);
    return s && s->start_ticks == id.start_ticks && s->state != 'Z' && s->state != 'X';
}

TimeUs start_time(std::uint64_t start_ticks) {
    const Result<std::string> stat = identity::read_proc_file("/proc/stat", 1 << 16);
    std::int64_t boot_s = 0;
    if (stat) {
        const std::string_view text = stat.value();
        const std::size_t at = text.find("\nbtime ");
        if (at != std::string_view::npos) {
            boot_s = std::strtoll(text.data() + at + 7, nullptr, 10);
        }
    }
    const long ticks_per_s = sysconf(_SC_CLK_TCK);
    const auto since_boot_us = static_cast<std::int64_t>(start_ticks) * k_us_per_second /
                               (ticks_per_s > 0 ? ticks_per_s : 100);
    return boot_s * k_us_per_second + since_boot_us;
}

bool terminate_and_wait(const ProcessId& id, DurationUs timeout) {
    if (!is_alive(id)) {
        return true;
    }
    ::kill(id.pid, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(timeout);
    while (std::chrono::steady_clock::now() < deadline) {
        if (!is_alive(id)) {
            return true;
        }
        std::this_thread::sleep_for(k_poll_interval);
    }
    return !is_alive(id);
}

} // namespace gua::ops
