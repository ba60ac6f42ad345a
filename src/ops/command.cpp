// SPDX-License-Identifier: Apache-2.0
// posix_spawnp with one pipe for stdout+stderr.
#include "ops/command.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace gua::ops {

CommandResult run_command(const std::vector<std::string>& argv) {
    CommandResult result;
    int fds[2] = {-1, -1};
    if (argv.empty() || ::pipe2(fds, O_CLOEXEC) != 0) {
        return {127, "cannot run an empty command"};
    }
    std::vector<char*> args;
    for (const std::string& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
        ::close(fds[0]);
        return {127, argv[0] + ": " + std::strerror(rc)};
    }
    char buffer[4096];
    while (true) {
        const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        result.output.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

std::string command_line(const std::vector<std::string>& argv) {
    std::string line;
    for (const std::string& a : argv) {
        line += line.empty() ? "" : " ";
        line += a.find_first_of(" \t'\"$") == std::string::npos ? a : "'" + a + "'";
    }
    return line;
}

} // namespace gua::ops
