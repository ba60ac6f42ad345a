// SPDX-License-Identifier: Apache-2.0
// Test helpers for policy and live-view tests: child processes and hand-built ticks.
#pragma once

#include "support/temp_dir.hpp"
#include "telemetry/tick.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace gua::policy_test {

/// A directory removed with its contents on destruction.
using TempDir = test::TempDir;

/// A child process of the test (fork + execv). It is only ever signalled while unreaped, so its
/// pid cannot have been reused; the destructor kills and reaps it unless wait_exit() already did.
class Child {
  public:
    /// Starts `argv` (argv[0] an absolute path); pid() is -1 when fork failed.
    explicit Child(const std::vector<std::string>& argv) {
        std::vector<char*> args;
        for (const std::string& a : argv) {
            args.push_back(const_cast<char*>(a.c_str()));
        }
        args.push_back(nullptr);
        if (argv.empty()) {
            return;
        }
        m_pid = ::fork();
        if (m_pid == 0) {
            ::execv(args[0], args.data());
            ::_exit(127);
        }
    }
    /// Takes charge of `pid`, a child of this process started some other way (e.g. clone3).
    static std::unique_ptr<Child> adopt(pid_t pid) {
        auto child = std::unique_ptr<Child>(new Child(std::vector<std::string>{}));
        child->m_pid = pid;
        return child;
    }
    ~Child() { kill_and_reap(); }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    pid_t pid() const { return m_pid; }
    /// Waits up to `timeout` for the child to end; returns its wait status, nullopt on timeout.
    std::optional<int> wait_exit(std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (m_pid > 0) {
            int status = 0;
            const pid_t done = ::waitpid(m_pid, &status, WNOHANG);
            if (done == m_pid) {
                m_pid = -1;
                return status;
            }
            if ((done < 0 && errno != EINTR) || std::chrono::steady_clock::now() > deadline) {
                return std::nullopt;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return std::nullopt;
    }
    /// True while the child runs (not exited; a zombie counts as exited).
    bool running() const {
        siginfo_t info{};
        return m_pid > 0 &&
               ::waitid(P_PID, static_cast<id_t>(m_pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
               info.si_pid == 0;
    }
    /// Kills (SIGKILL) and reaps the child; idempotent.
    void kill_and_reap() {
        if (m_pid > 0) {
            ::kill(m_pid, SIGKILL);
            while (::waitpid(m_pid, nullptr, 0) < 0 && errno == EINTR) {
            }
        }
        m_pid = -1;
    }

  private:
    pid_t m_pid = -1;
};

/// A compute process of `user` (uid) holding `mib` with SM utilization `sm_pct`.
inline telemetry::ProcessTick process(std::uint32_t pid, std::uint64_t start_ticks,
                                      std::int64_t mib, std::optional<double> sm_pct,
                                      const std::string& user = "alice", std::uint32_t uid = 1500) {
    telemetry::ProcessTick p;
    p.pid = pid;
    p.start_ticks = start_ticks;
    p.identity.user = user;
    p.identity.uid = uid;
    p.identity.command = "python3";
    p.mem_used_mib = mib;
    p.sm_util_pct = sm_pct;
    return p;
}

/// Card `index` ("GPU-<index>…") over a tick, `util_pct` utilization for the whole tick.
inline telemetry::CardTickRecord card(int index, double util_pct, DurationUs duration_us,
                                      std::vector<telemetry::ProcessTick> processes) {
    telemetry::CardTickRecord c;
    c.device.uuid = "GPU-0000000" + std::to_string(index) + "-aaaa";
    c.device.index = index;
    c.device.name = "NVIDIA H100 80GB HBM3";
    c.device.memory_total_mib = 81559;
    c.util_source = telemetry::UtilSource::samples;
    c.util_pct = util_pct;
    c.active_us = util_pct >= 10 ? duration_us : 0;
    c.bucket_us[util_pct >= 90 ? 3 : util_pct >= 70 ? 2 : util_pct >= 10 ? 1 : 0] = duration_us;
    std::int64_t used = 0;
    for (const auto& p : processes) {
        used += p.mem_used_mib.value_or(0);
    }
    c.readings.mem_used_mib = used;
    c.processes = std::move(processes);
    return c;
}

/// A tick at `t0` lasting `duration_us` with `cards`.
inline telemetry::Tick tick(std::uint64_t seq, TimeUs t0, DurationUs duration_us,
                            std::vector<telemetry::CardTickRecord> cards) {
    telemetry::Tick t;
    t.seq = seq;
    t.t0 = t0;
    t.duration_us = duration_us;
    t.cards = std::move(cards);
    return t;
}

} // namespace gua::policy_test
