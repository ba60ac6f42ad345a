// SPDX-License-Identifier: Apache-2.0
// Test helper: a server process (gua daemon, prometheus) started with extra environment and its
// output in a log file; stopped with SIGTERM (then SIGKILL) and always reaped.
#pragma once

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

extern char** environ;

namespace gua::fleet_testing {

using Env = std::vector<std::pair<std::string, std::string>>;

/// A child process whose stdout and stderr go to `log_path`.
class Process {
  public:
    Process(const std::vector<std::string>& argv, const Env& env, const std::string& log_path) {
        std::vector<std::string> env_text;
        for (char** e = environ; *e != nullptr; ++e) {
            env_text.emplace_back(*e);
        }
        for (const auto& [k, v] : env) {
            env_text.push_back(k + "=" + v);
        }
        std::vector<char*> args;
        std::vector<char*> envp;
        for (const std::string& a : argv) {
            args.push_back(const_cast<char*>(a.c_str()));
        }
        args.push_back(nullptr);
        for (const std::string& e : env_text) {
            envp.push_back(const_cast<char*>(e.c_str()));
        }
        envp.push_back(nullptr);
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                         O_WRONLY | O_CREAT | O_APPEND, 0644);
        posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
        if (posix_spawn(&m_pid, args[0], &actions, nullptr, args.data(), envp.data()) != 0) {
            m_pid = -1;
        }
        posix_spawn_file_actions_destroy(&actions);
    }
    ~Process() { stop(std::chrono::milliseconds(0)); }
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;

    pid_t pid() const { return m_pid; }

    /// True while the child has not exited (reaps it when it has).
    bool running() {
        if (m_pid <= 0) {
            return false;
        }
        int status = 0;
        if (waitpid(m_pid, &status, WNOHANG) == m_pid) {
            m_status = status;
            m_pid = -1;
            return false;
        }
        return true;
    }

    /// Sends SIGTERM, waits up to `grace`, then SIGKILL; returns the exit code (-1 if killed).
    int stop(std::chrono::milliseconds grace) {
        if (m_pid > 0) {
            kill(m_pid, SIGTERM);
            const auto deadline = std::chrono::steady_clock::now() + grace;
            while (running() && std::chrono::steady_clock::now() < deadline) {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
            if (m_pid > 0) {
                kill(m_pid, SIGKILL);
                waitpid(m_pid, &m_status, 0);
                m_pid = -1;
                return -1;
            }
        }
        return WIFEXITED(m_status) ? WEXITSTATUS(m_status) : -1;
    }

  private:
    pid_t m_pid = -1;
    int m_status = 0;
};

} // namespace gua::fleet_testing
