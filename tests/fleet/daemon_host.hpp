// SPDX-License-Identifier: Apache-2.0
// Test helper: one "host" — a real `gua daemon` on the fake NVML with its own scenario, database
// and /metrics port; and real holder processes (as other uids where possible) named in scenarios.
#pragma once

#include "fleet/process.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

namespace gua::fleet_testing {

/// The fake libnvidia-ml.so.1 built with the tests.
inline std::string fake_nvml_library() {
    return std::string(GUA_FAKE_NVML_DIR) + "/libnvidia-ml.so.1";
}

/// True when the fake NVML library was built (tests/fake_nvml).
inline bool fake_nvml_available() {
    return access(fake_nvml_library().c_str(), R_OK) == 0;
}

/// A sleeping process as uid `uid` (as ourselves when we cannot switch), killed on destruction.
class Holder {
  public:
    explicit Holder(unsigned uid) {
        std::vector<std::string> argv{"/usr/bin/sleep", "600"};
        if (getuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0) {
            const std::string id = std::to_string(uid);
            argv = {"/usr/bin/setpriv", "--reuid=" + id,  "--regid=" + id,
                    "--clear-groups",   "/usr/bin/sleep", "600"};
        }
        m_process = std::make_unique<Process>(argv, Env{}, "/dev/null");
    }
    std::string pid() const { return std::to_string(m_process->pid()); }

  private:
    std::unique_ptr<Process> m_process;
};

/// A gua daemon playing `scenario` with --listen 127.0.0.1:`port` (and `extra` flags), configured
/// by the gua.toml text `config` (empty: an empty file).
class DaemonHost {
  public:
    DaemonHost(const std::filesystem::path& dir, const std::string& name,
               const nlohmann::json& scenario, std::uint16_t port, const Env& env,
               const std::string& interval = "1s", const std::vector<std::string>& extra = {},
               const std::string& config = "")
        : m_db((dir / (name + ".db")).string()), m_log((dir / (name + ".log")).string()),
          m_port(port) {
        const std::string scenario_path = (dir / (name + ".json")).string();
        std::ofstream(scenario_path) << scenario.dump(2);
        const std::filesystem::path config_path =
            dir / (config.empty() ? "empty.toml" : name + ".toml");
        // Appending nothing to the shared empty file, or writing the host's own anew.
        std::ofstream(config_path, config.empty() ? std::ios::app : std::ios::trunc) << config;
        Env all = env;
        all.emplace_back("GUA_FAKE_NVML_SCENARIO", scenario_path);
        std::vector<std::string> args{GUA_BINARY,       "daemon",
                                      "--db",           m_db,
                                      "--interval",     interval,
                                      "--listen",       "127.0.0.1:" + std::to_string(port),
                                      "--nvml-library", fake_nvml_library(),
                                      "--config",       config_path.string()};
        args.insert(args.end(), extra.begin(), extra.end());
        m_process = std::make_unique<Process>(args, all, m_log);
    }
    /// SIGTERM and wait; returns the daemon's exit code.
    int stop() { return m_process->stop(std::chrono::seconds(20)); }
    bool running() { return m_process->running(); }
    const std::string& db() const { return m_db; }
    const std::string& log() const { return m_log; }
    std::uint16_t port() const { return m_port; }

  private:
    std::string m_db;
    std::string m_log;
    std::uint16_t m_port;
    std::unique_ptr<Process> m_process;
};

} // namespace gua::fleet_testing
