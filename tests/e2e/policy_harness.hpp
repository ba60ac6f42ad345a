// SPDX-License-Identifier: Apache-2.0
// End-to-end harness for policy, `gua now` and `gua top`: the real gua daemon on the fake NVML,
// real processes under other uids (setpriv) named in the scenario, and waiting on the database.
#pragma once

#include "core/time.hpp"
#include "identity/user.hpp"
#include "policy/support.hpp"
#include "store/database.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace gua::policy_e2e {

using policy_test::Child;

/// Skips the test unless it runs as root (setpriv to other uids needs it).
#define GUA_REQUIRE_ROOT()                                                                         \
    if (::geteuid() != 0) {                                                                        \
        GTEST_SKIP() << "needs root to start processes under other uids";                          \
    }

inline std::string fake_library() {
    return std::string(GUA_FAKE_NVML_DIR) + "/libnvidia-ml.so.1";
}

/// The user label gua gives `uid` ("uid:1500" when the passwd database has no entry).
inline std::string label(std::uint32_t uid) {
    return identity::user_label(uid, identity::passwd_name(uid));
}

/// `program args…` as `uid`:`uid` without supplementary groups (uid 0: run directly).
inline std::unique_ptr<Child> start_as(std::uint32_t uid, const std::string& program,
                                       const std::vector<std::string>& args) {
    std::vector<std::string> argv;
    if (uid != 0) {
        argv = {"/usr/bin/setpriv", "--reuid=" + std::to_string(uid),
                "--regid=" + std::to_string(uid), "--clear-groups"};
    }
    argv.push_back(program);
    argv.insert(argv.end(), args.begin(), args.end());
    return std::make_unique<Child>(argv);
}

/// Waits until /proc/<pid>/comm reads `comm` (setpriv has exec'd the program).
inline bool wait_for_comm(pid_t pid, const std::string& comm) {
    for (int i = 0; i < 500; ++i) {
        std::string now;
        std::ifstream("/proc/" + std::to_string(pid) + "/comm") >> now;
        if (now == comm) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

/// Polls `done` every 100 ms for up to `timeout`; true when it held.
inline bool eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (done()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return done();
}

/// A fake GPU scenario with holders named by environment variables, and a test directory.
class Scene {
  public:
    Scene() { std::filesystem::permissions(m_dir.path(), std::filesystem::perms(0755)); }
    /// Leaves the test process's environment as it found it (other tests run in it too).
    ~Scene() {
        ::unsetenv("GUA_FAKE_NVML_SCENARIO");
        for (std::size_t i = 0; i < m_processes.size(); ++i) {
            ::unsetenv(("GUA_E2E_PID_" + std::to_string(i)).c_str());
        }
    }
    Scene(const Scene&) = delete;
    Scene& operator=(const Scene&) = delete;

    const policy_test::TempDir& dir() const { return m_dir; }
    std::string db() const { return m_dir.file("gua.db"); }

    /// Adds an idle holder of `mib` on GPU `device` for the real process `pid`; it vanishes from
    /// the fake driver when the process exits.
    void hold(pid_t pid, std::int64_t mib, int device = 0, double sm_util = 0) {
        hold_series(pid, mib, device, {{0, sm_util}});
    }
    /// The same with its SM utilization as a scenario series, e.g. [[0, 50], [4, 0]].
    void hold_series(pid_t pid, std::int64_t mib, int device, const nlohmann::json& sm_util) {
        const std::string var = "GUA_E2E_PID_" + std::to_string(m_processes.size());
        ::setenv(var.c_str(), std::to_string(pid).c_str(), 1);
        m_processes.push_back({{"device", device},
                               {"pid_env", var},
                               {"until_exit", true},
                               {"memory_mib", {{0, mib}}},
                               {"sm_util", sm_util}});
    }
    /// Writes the scenario (two GPUs at 0 % utilization) and `config` (gua.toml text).
    void write(const std::string& config) {
        const nlohmann::json scenario{{"devices", {{{"util", {{0, 0}}}}, {{"util", {{0, 0}}}}}},
                                      {"processes", m_processes}};
        std::ofstream(m_dir.file("scenario.json")) << scenario.dump(2);
        std::ofstream(m_dir.file("gua.toml")) << config;
        ::setenv("GUA_FAKE_NVML_SCENARIO", m_dir.file("scenario.json").c_str(), 1);
    }
    /// Copies /bin/sleep to `name` in the test directory (so its comm is `name`).
    std::string sleep_named(const std::string& name) const {
        const std::string path = m_dir.file(name);
        std::filesystem::copy_file("/bin/sleep", path);
        std::filesystem::permissions(path, std::filesystem::perms(0755));
        return path;
    }
    /// Starts `gua daemon` on the fake driver with a 1 s tick.
    std::unique_ptr<Child> start_daemon() const {
        return std::make_unique<Child>(
            std::vector<std::string>{GUA_BINARY, "daemon", "--nvml-library", fake_library(), "--db",
                                     db(), "--interval", "1s", "--config", m_dir.file("gua.toml"),
                                     "--log", m_dir.file("daemon.log"), "--quiet"});
    }
    /// Stops a daemon with SIGTERM (it is our child) and expects a clean exit.
    static void stop_daemon(Child& daemon) {
        ::kill(daemon.pid(), SIGTERM);
        const std::optional<int> status = daemon.wait_exit(std::chrono::seconds(15));
        ASSERT_TRUE(status) << "the daemon did not stop";
        EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
    }
    /// Runs `sql` on the database (read-only, with a busy timeout); 0 when it does not exist yet.
    std::int64_t scalar(const std::string& sql) const {
        if (!std::filesystem::exists(db())) {
            return 0;
        }
        try {
            store::Database db_conn(db(), store::OpenMode::read_only);
            return db_conn.scalar(sql);
        } catch (const std::exception&) {
            return 0; // not migrated yet
        }
    }
    /// The daemon's log so far.
    std::string log() const {
        std::ifstream in(m_dir.file("daemon.log"));
        return std::string(std::istreambuf_iterator<char>(in), {});
    }

  private:
    policy_test::TempDir m_dir;
    nlohmann::json m_processes = nlohmann::json::array();
};

} // namespace gua::policy_e2e
