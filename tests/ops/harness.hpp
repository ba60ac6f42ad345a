// SPDX-License-Identifier: Apache-2.0
// Test harness for the operations commands: runs the real gua binary with a controlled
// environment and a time limit, in a temporary root tree, with the fake NVML library; kills and
// reaps every daemon a test started.
#pragma once

#include "core/result.hpp"
#include "core/time.hpp"
#include "ops/pid_file.hpp"
#include "ops/process.hpp"
#include "support/run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <poll.h>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace gua::ops::testing {

namespace fs = std::filesystem;

/// What a gua run printed and returned.
struct GuaRun {
    int exit_code = -1;
    std::string out;
    std::string err;
};

/// Variables the harness clears in every child so the host's settings cannot leak in.
inline const std::vector<std::string> k_cleared_env{
    "GUA_DB",        "GUA_SYSTEMCTL", "GUA_NVML_LIBRARY", "GUA_FAKE_NVML_SCENARIO",
    "NOTIFY_SOCKET", "WATCHDOG_USEC", "XDG_STATE_HOME",   "XDG_CONFIG_HOME"};

/// Runs GUA_BINARY with `args` and `env` (added to a cleaned copy of ours); kills it after
/// `timeout_s` seconds.
inline GuaRun run_gua(const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& env = {}, int timeout_s = 60) {
    GuaRun run;
    int out[2];
    int err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
        return run;
    }
    std::vector<std::string> argv{GUA_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargs;
    for (std::string& a : argv) {
        cargs.push_back(a.data());
    }
    cargs.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        for (const std::string& name : k_cleared_env) {
            ::unsetenv(name.c_str());
        }
        for (const auto& [name, value] : env) {
            ::setenv(name.c_str(), value.c_str(), 1);
        }
        const int null_fd = ::open("/dev/null", O_RDONLY);
        ::dup2(null_fd, STDIN_FILENO);
        ::dup2(out[1], STDOUT_FILENO);
        ::dup2(err[1], STDERR_FILENO);
        ::execv(cargs[0], cargs.data());
        ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    std::string* sinks[2] = {&run.out, &run.err};
    int open_fds = 2;
    while (open_fds > 0 && std::chrono::steady_clock::now() < deadline) {
        if (::poll(fds, 2, 100) <= 0) {
            continue;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP)) != 0) {
                char buffer[4096];
                const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
                if (n > 0) {
                    sinks[i]->append(buffer, static_cast<std::size_t>(n));
                } else if (n == 0 || errno != EINTR) {
                    ::close(fds[i].fd);
                    fds[i].fd = -1;
                    --open_fds;
                }
            }
        }
    }
    for (const pollfd& p : fds) {
        if (p.fd >= 0) {
            ::close(p.fd);
            ::kill(pid, SIGKILL);
        }
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return run;
}

/// The fake libnvidia-ml.so.1 built by tests/fake_nvml; empty when it was not built.
inline std::string fake_nvml_library() {
    const std::string path = std::string(GUA_FAKE_NVML_DIR) + "/libnvidia-ml.so.1";
    return fs::exists(path) ? path : "";
}

/// True when `text` contains `part`.
inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

using gua::test::read_text;

/// A fresh temporary root tree per test; daemons recorded in its pid file, or registered with
/// adopt(), are killed and reaped on tear-down. The test process is a child subreaper, so
/// daemons that `gua start` detached become its children and are reaped here.
class OpsTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ::prctl(PR_SET_CHILD_SUBREAPER, 1);
        std::string pattern = (fs::temp_directory_path() / "gua-ops-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        m_root = pattern;
    }

    void TearDown() override {
        const PidFileInfo info = read_pid_file(pid_file().string());
        if (info.status == PidFileInfo::Status::running) {
            adopt(info.id);
        }
        for (const ProcessId& id : m_daemons) {
            if (is_alive(id)) {
                ::kill(id.pid, SIGKILL);
            }
            ::waitpid(id.pid, nullptr, 0);
        }
        while (::waitpid(-1, nullptr, WNOHANG) > 0) {
        }
        std::error_code ec;
        fs::remove_all(m_root, ec);
    }

    /// Kills and reaps `id` at tear-down if it still runs.
    void adopt(const ProcessId& id) { m_daemons.push_back(id); }

    const fs::path& root() const { return m_root; }
    fs::path state_dir() const { return m_root / "var/lib/gua"; }
    fs::path db() const { return state_dir() / "gua.db"; }
    fs::path pid_file() const { return state_dir() / "gua.pid"; }
    fs::path log_file() const { return state_dir() / "gua.log"; }
    fs::path config_file() const { return m_root / "etc/gua/gua.toml"; }

    /// Runs `gua <command> --root <root> <args...>`.
    GuaRun gua(const std::string& command, std::vector<std::string> args = {},
               const std::map<std::string, std::string>& env = {}) const {
        args.insert(args.begin(), {command, "--root", m_root.string()});
        return run_gua(args, env);
    }

  private:
    fs::path m_root;
    std::vector<ProcessId> m_daemons;
};

/// An OpsTest whose daemons read the fake NVML library playing `devices` GPUs (skipped when
/// the fake library was not built).
class FakeGpuTest : public OpsTest {
  protected:
    void SetUp() override {
        OpsTest::SetUp();
        m_library = fake_nvml_library();
        if (m_library.empty()) {
            GTEST_SKIP() << "the fake NVML library (tests/fake_nvml) is not built";
        }
        write_scenario(nlohmann::json{{"driver_version", "560.35.05"},
                                      {"devices",
                                       {{{"name", "NVIDIA H100 80GB HBM3"}, {"util", {{0, 80}}}},
                                        {{"name", "NVIDIA A100-SXM4-40GB"}, {"util", {{0, 0}}}}}}});
    }

    /// Replaces the scenario file.
    void write_scenario(const nlohmann::json& scenario) const {
        std::ofstream(root() / "scenario.json") << scenario.dump();
    }

    /// The environment that points gua at the fake library and the scenario.
    std::map<std::string, std::string> fake_env() const {
        return {{"GUA_NVML_LIBRARY", m_library},
                {"GUA_FAKE_NVML_SCENARIO", (root() / "scenario.json").string()}};
    }

    /// `gua start --interval 1s` in the background; registers the daemon for tear-down.
    GuaRun start_background() {
        GuaRun run = gua("start", {"--interval", "1s"}, fake_env());
        const PidFileInfo info = read_pid_file(pid_file().string());
        if (info.status == PidFileInfo::Status::running) {
            adopt(info.id);
        }
        return run;
    }

    /// Starts `gua <args>` as this test's own child (a daemon run by hand, in the foreground);
    /// registers it for tear-down.
    void start_foreground(std::vector<std::string> args) {
        std::vector<char*> argv{const_cast<char*>(GUA_BINARY)};
        for (std::string& a : args) {
            argv.push_back(a.data());
        }
        argv.push_back(nullptr);
        const std::map<std::string, std::string> env = fake_env();
        const pid_t pid = ::fork();
        if (pid == 0) {
            for (const auto& [name, value] : env) {
                ::setenv(name.c_str(), value.c_str(), 1);
            }
            const int null_fd = ::open("/dev/null", O_RDWR);
            ::dup2(null_fd, STDOUT_FILENO);
            ::dup2(null_fd, STDERR_FILENO);
            ::execv(GUA_BINARY, argv.data());
            ::_exit(127);
        }
        if (const std::optional<ProcessId> id = identify(pid)) {
            adopt(*id);
        }
    }

    /// Polls `gua status --format json` until the database has a tick, and its ticks span at
    /// least `span_s` seconds (at most 15 s plus the span).
    nlohmann::json status_after_first_tick(int span_s = 0) const {
        nlohmann::json status;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15 + span_s);
        while (std::chrono::steady_clock::now() < deadline) {
            status = nlohmann::json::parse(gua("status", {"--format", "json"}).out);
            const nlohmann::json& d = status["database"];
            if (!d["last_tick_end"].is_null() && !d["first_tick"].is_null() && !d["gpus"].empty()) {
                const Result<TimeUs> first = parse_iso8601(d["first_tick"].get<std::string>());
                const Result<TimeUs> end = parse_iso8601(d["last_tick_end"].get<std::string>());
                if (first && end && end.value() - first.value() >= span_s * k_us_per_second) {
                    break;
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
        return status;
    }

  private:
    std::string m_library;
};

} // namespace gua::ops::testing
