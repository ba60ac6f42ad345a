// SPDX-License-Identifier: Apache-2.0
// Test helper: a real child process (fork + exec) that is always killed and reaped.
#pragma once

#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <fstream>
#include <signal.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace gua::identity::testing {

/// Runs `argv` (argv[0] an absolute path) as a child; the destructor sends SIGKILL and reaps it.
class ChildProcess {
  public:
    explicit ChildProcess(const std::vector<std::string>& argv) {
        std::vector<char*> args;
        for (const std::string& arg : argv) {
            args.push_back(const_cast<char*>(arg.c_str()));
        }
        args.push_back(nullptr);
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) {
            return;
        }
        m_pid = ::fork();
        if (m_pid == 0) {
            ::close(fds[0]);
            ::execv(args[0], args.data());
            const int err = errno;
            [[maybe_unused]] const auto n = ::write(fds[1], &err, sizeof err);
            ::_exit(127);
        }
        ::close(fds[1]);
        int err = 0;
        // The pipe closes on a successful exec; otherwise the child reports errno.
        if (m_pid > 0 && ::read(fds[0], &err, sizeof err) == static_cast<ssize_t>(sizeof err)) {
            stop();
        }
        ::close(fds[0]);
    }
    ~ChildProcess() { stop(); }
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    /// The child's pid, or -1 when it could not be started (or was stopped).
    pid_t pid() const { return m_pid; }

    /// Waits until /proc/<pid>/comm reads `comm` (wrappers like setpriv exec the real program).
    bool wait_for_comm(const std::string& comm) const {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (std::chrono::steady_clock::now() < deadline) {
            std::string now;
            std::ifstream("/proc/" + std::to_string(m_pid) + "/comm") >> now;
            if (now == comm) {
                return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return false;
    }

    /// Kills and reaps the child; idempotent.
    void stop() {
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

} // namespace gua::identity::testing
