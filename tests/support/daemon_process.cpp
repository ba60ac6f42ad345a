// SPDX-License-Identifier: Apache-2.0
// Background child processes for end-to-end tests: spawn, poll their output, signal, reap.
#include "support/daemon_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace gua::test {

bool poll_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!condition()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return condition();
        }
        std::this_thread::sleep_for(10ms);
    }
    return true;
}

int count_of(const std::string& haystack, const std::string& needle) {
    int n = 0;
    for (std::size_t at = haystack.find(needle); at != std::string::npos;
         at = haystack.find(needle, at + needle.size())) {
        ++n;
    }
    return n;
}

BackgroundProcess::BackgroundProcess(const std::string& program,
                                     const std::vector<std::string>& args,
                                     const std::map<std::string, std::string>& env,
                                     const std::string& dir, const std::string& name)
    : m_out(dir + "/" + name + ".out"), m_err(dir + "/" + name + ".err") {
    std::vector<std::string> argv_strings{program};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<std::string> env_strings = merged_environment(env);
    std::vector<char*> argv = argv_pointers(argv_strings);
    std::vector<char*> envp = argv_pointers(env_strings);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, m_out.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, m_err.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0600);
    // A fresh signal mask and default dispositions, whatever the test runner set.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none;
    sigset_t all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    const int rc = posix_spawn(&m_pid, program.c_str(), &actions, &attr, argv.data(), envp.data());
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        m_pid = -1;
        throw std::runtime_error("cannot start " + program + ": " + std::strerror(rc));
    }
}

BackgroundProcess::~BackgroundProcess() {
    if (running()) {
        ::kill(m_pid, SIGKILL);
        int status = 0;
        while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
}

bool BackgroundProcess::running() {
    if (m_pid <= 0 || m_exit_code) {
        return false;
    }
    int status = 0;
    const pid_t r = ::waitpid(m_pid, &status, WNOHANG);
    if (r == m_pid) {
        m_exit_code = exit_code_of(status);
        return false;
    }
    return r == 0;
}

void BackgroundProcess::signal(int sig) {
    if (running()) {
        ::kill(m_pid, sig);
    }
}

std::optional<int> BackgroundProcess::wait_exit(std::chrono::milliseconds timeout) {
    poll_until([&] { return !running(); }, timeout);
    return m_exit_code;
}

bool BackgroundProcess::wait_for(const std::string& text, std::chrono::milliseconds timeout,
                                 int count, const std::string& file) {
    const std::string& path = file.empty() ? m_err : file;
    const auto found = [&] { return count_of(read_text(path), text) >= count; };
    // Gives up early when the process exited; one last look catches text written just before.
    poll_until([&] { return found() || !running(); }, timeout);
    return found();
}

std::unique_ptr<BackgroundProcess> start_gua(const std::vector<std::string>& args,
                                             std::map<std::string, std::string> env,
                                             const std::string& dir, const std::string& name) {
    env.try_emplace("NO_COLOR", "1");
    return std::make_unique<BackgroundProcess>(GUA_BINARY, args, env, dir, name);
}

} // namespace gua::test
