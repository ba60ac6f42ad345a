// SPDX-License-Identifier: Apache-2.0
// Child processes for end-to-end tests: posix_spawn with output redirected to temporary files.
#include "support/run.hpp"

#include "support/temp_dir.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <linux/sched.h>
#include <poll.h>
#include <spawn.h>
#include <sstream>
#include <stdexcept>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace gua::test {

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> merged_environment(const std::map<std::string, std::string>& env) {
    std::vector<std::string> out;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string entry(*e);
        const std::string name = entry.substr(0, entry.find('='));
        if (env.find(name) == env.end()) {
            out.push_back(entry);
        }
    }
    for (const auto& [name, value] : env) {
        if (!value.empty()) {
            out.push_back(name + "=" + value);
        }
    }
    return out;
}

std::vector<char*> argv_pointers(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (std::string& s : strings) {
        out.push_back(s.data());
    }
    out.push_back(nullptr);
    return out;
}

int exit_code_of(int wait_status) {
    if (WIFEXITED(wait_status)) {
        return WEXITSTATUS(wait_status);
    }
    return WIFSIGNALED(wait_status) ? 128 + WTERMSIG(wait_status) : -1;
}

RunResult run(const std::string& program, const std::vector<std::string>& args,
              const std::map<std::string, std::string>& env) {
    const TempDir dir;
    const std::string out_path = dir.file("stdout");
    const std::string err_path = dir.file("stderr");
    std::vector<std::string> argv_strings{program};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<std::string> env_strings = merged_environment(env);
    std::vector<char*> argv = argv_pointers(argv_strings);
    std::vector<char*> envp = argv_pointers(env_strings);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        throw std::runtime_error("cannot start " + program + ": " + std::strerror(rc));
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            throw std::runtime_error("waitpid failed for " + program);
        }
    }
    RunResult result;
    result.exit_code = exit_code_of(status);
    result.out = read_text(out_path);
    result.err = read_text(err_path);
    return result;
}

RunResult run_in_pty(const std::string& program, const std::vector<std::string>& args,
                     const std::map<std::string, std::string>& env) {
    const int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
        throw std::runtime_error("cannot create a pseudo-terminal");
    }
    const std::string slave_name = ptsname(master);
    // Held open by the parent too, so reads never fail before the child has opened its side.
    const int slave = open(slave_name.c_str(), O_RDWR | O_NOCTTY);
    std::vector<std::string> argv_strings{program};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<std::string> env_strings = merged_environment(env);
    std::vector<char*> argv = argv_pointers(argv_strings);
    std::vector<char*> envp = argv_pointers(env_strings);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, slave, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, slave, STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, master);
    posix_spawn_file_actions_addclose(&actions, slave);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        close(slave);
        close(master);
        throw std::runtime_error("cannot start " + program + ": " + std::strerror(rc));
    }
    RunResult result;
    int status = 0;
    bool exited = false;
    char buf[4096];
    while (true) {
        pollfd pfd{master, POLLIN, 0};
        if (poll(&pfd, 1, exited ? 0 : 50) > 0 && (pfd.revents & POLLIN) != 0) {
            const ssize_t n = read(master, buf, sizeof buf);
            if (n > 0) {
                result.out.append(buf, static_cast<std::size_t>(n));
                continue;
            }
        }
        if (exited) {
            break;
        }
        exited = waitpid(pid, &status, WNOHANG) == pid;
    }
    close(slave);
    close(master);
    result.exit_code = exit_code_of(status);
    return result;
}

RunResult run_gua(const std::vector<std::string>& args, std::map<std::string, std::string> env) {
    env.try_emplace("NO_COLOR", "1");
    return run(GUA_BINARY, args, env);
}

pid_t spawn_with_pid(pid_t pid, const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const std::string& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    clone_args ca{};
    ca.exit_signal = SIGCHLD;
    ca.set_tid = reinterpret_cast<std::uint64_t>(&pid);
    ca.set_tid_size = 1;
    const long r = ::syscall(SYS_clone3, &ca, sizeof ca);
    if (r == 0) {
        ::execv(args[0], args.data());
        ::_exit(127);
    }
    return static_cast<pid_t>(r);
}

} // namespace gua::test
