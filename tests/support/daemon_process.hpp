// SPDX-License-Identifier: Apache-2.0
// A `gua daemon` (or any program) running in the background of an end-to-end test: its output is
// captured to files that the test polls with bounded waits; it is always killed and reaped.
#pragma once

#include "support/run.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace gua::test {

using namespace std::chrono_literals;

/// Polls `condition` every 10 ms until it is true or `timeout` passed; returns its last value.
bool poll_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout);

/// A child process started with posix_spawn, stdin from /dev/null, stdout and stderr appended to
/// `<dir>/<name>.out` and `<dir>/<name>.err`.
class BackgroundProcess {
  public:
    /// Starts `program` with `args`; `env` entries override the current environment (an empty
    /// value unsets). Throws std::runtime_error when it cannot be started.
    BackgroundProcess(const std::string& program, const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& env, const std::string& dir,
                      const std::string& name);
    /// Sends SIGKILL (when still running) and reaps.
    ~BackgroundProcess();
    BackgroundProcess(const BackgroundProcess&) = delete;
    BackgroundProcess& operator=(const BackgroundProcess&) = delete;

    pid_t pid() const { return m_pid; }
    std::string out() const { return read_text(m_out); }
    std::string err() const { return read_text(m_err); }
    const std::string& err_path() const { return m_err; }

    /// True until the process exited (reaps it then).
    bool running();
    /// Sends `sig` if the process is still running.
    void signal(int sig);
    /// Waits up to `timeout` for the exit; the exit code (128 + signal when killed), or nullopt.
    std::optional<int> wait_exit(std::chrono::milliseconds timeout);
    /// Waits until `file` (default: the captured stderr) contains `text` at least `count` times,
    /// giving up after `timeout` or when the process exited without writing it.
    bool wait_for(const std::string& text, std::chrono::milliseconds timeout = 15s, int count = 1,
                  const std::string& file = "");

  private:
    pid_t m_pid = -1;
    std::optional<int> m_exit_code;
    std::string m_out;
    std::string m_err;
};

/// Runs GUA_BINARY in the background (see BackgroundProcess); NO_COLOR is set.
std::unique_ptr<BackgroundProcess> start_gua(const std::vector<std::string>& args,
                                             std::map<std::string, std::string> env,
                                             const std::string& dir,
                                             const std::string& name = "gua");

/// Number of non-overlapping occurrences of `needle` in `haystack`.
int count_of(const std::string& haystack, const std::string& needle);

} // namespace gua::test
