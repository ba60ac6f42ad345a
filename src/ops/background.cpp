// SPDX-License-Identifier: Apache-2.0
// fork/exec of the daemon with a private sd_notify socket (an abstract Unix socket name).
#include "ops/background.hpp"

#include "core/fd.hpp"
#include "ops/pid_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace gua::ops {

namespace {

constexpr int k_poll_ms = 100;

struct NotifySocket {
    int fd = -1;
    std::string name; ///< abstract name without the leading NUL
    ~NotifySocket() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
};

bool open_notify_socket(NotifySocket& s) {
    s.fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s.fd < 0) {
        return false;
    }
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    s.name = fmt::format("gua-start-{}-{}", ::getpid(), now);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path + 1, s.name.data(), s.name.size());
    const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + s.name.size());
    return ::bind(s.fd, reinterpret_cast<const sockaddr*>(&addr), len) == 0;
}

std::vector<std::string> child_environment(const std::string& notify_name) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string_view v(*e);
        if (!v.starts_with("NOTIFY_SOCKET=") && !v.starts_with("WATCHDOG_") &&
            !v.starts_with("LISTEN_")) {
            env.emplace_back(v);
        }
    }
    env.push_back("NOTIFY_SOCKET=@" + notify_name);
    return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (std::string& s : strings) {
        out.push_back(s.data());
    }
    out.push_back(nullptr);
    return out;
}

[[noreturn]] void exec_child(int log_fd, int null_fd, char* const* argv, char* const* envp) {
    // The daemon starts with default signal dispositions and an empty mask, whatever the shell
    // that ran `gua start` ignored or blocked (`nohup`, `&` in a non-interactive shell).
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) {
        ::sigaction(sig, &dfl, nullptr);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::setsid();
    ::dup2(null_fd, STDIN_FILENO);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    if (::chdir("/") != 0 || ::close_range(3, ~0U, 0) != 0) {
        ::_exit(126);
    }
    ::umask(022);
    ::execve(argv[0], argv, envp);
    const char* why = std::strerror(errno);
    [[maybe_unused]] const ssize_t n1 = ::write(STDERR_FILENO, "gua start: cannot run ", 22);
    [[maybe_unused]] const ssize_t n2 = ::write(STDERR_FILENO, argv[0], std::strlen(argv[0]));
    [[maybe_unused]] const ssize_t n3 = ::write(STDERR_FILENO, ": ", 2);
    [[maybe_unused]] const ssize_t n4 = ::write(STDERR_FILENO, why, std::strlen(why));
    [[maybe_unused]] const ssize_t n5 = ::write(STDERR_FILENO, "\n", 1);
    ::_exit(127);
}

bool received_ready(int fd) {
    char buffer[4096];
    while (true) {
        const ssize_t n = ::recv(fd, buffer, sizeof buffer - 1, MSG_DONTWAIT);
        if (n < 0) {
            return false;
        }
        const std::string_view msg(buffer, static_cast<std::size_t>(n));
        if (msg == "READY=1" || msg.starts_with("READY=1\n") ||
            msg.find("\nREADY=1") != std::string_view::npos) {
            return true;
        }
    }
}

} // namespace

std::string last_log_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::string last;
    while (std::getline(in, line)) {
        if (!line.empty()) {
            last = line;
        }
    }
    return last;
}

LaunchResult launch_background(const BackgroundLaunch& launch) {
    LaunchResult result;
    NotifySocket notify;
    if (!open_notify_socket(notify)) {
        result.message = fmt::format("cannot create a notify socket: {}", std::strerror(errno));
        return result;
    }
    // Owned until the fork: every early return (and an exception) closes both.
    UniqueFd log_fd(
        ::open(launch.log_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
    if (!log_fd.valid()) {
        result.message = fmt::format("cannot open {}: {}", launch.log_file, std::strerror(errno));
        return result;
    }
    UniqueFd null_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!null_fd.valid()) {
        result.message = fmt::format("cannot open /dev/null: {}", std::strerror(errno));
        return result;
    }
    std::vector<std::string> args = launch.argv;
    std::vector<std::string> env = child_environment(notify.name);
    const std::vector<char*> argv = pointers(args);
    const std::vector<char*> envp = pointers(env);
    const pid_t pid = ::fork();
    if (pid == 0) {
        exec_child(log_fd.get(), null_fd.get(), argv.data(), envp.data());
    }
    log_fd = UniqueFd();
    null_fd = UniqueFd();
    if (pid < 0) {
        result.message = fmt::format("fork failed: {}", std::strerror(errno));
        return result;
    }
    result.id = identify(pid).value_or(ProcessId{pid, 0});
    try {
        write_pid_file(launch.pid_file, result.id);
    } catch (const std::exception& e) {
        ::kill(pid, SIGTERM);
        ::waitpid(pid, nullptr, 0);
        result.message = e.what();
        return result;
    }
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::microseconds(launch.ready_timeout);
    while (std::chrono::steady_clock::now() < deadline) {
        pollfd p{notify.fd, POLLIN, 0};
        if (::poll(&p, 1, k_poll_ms) > 0 && received_ready(notify.fd)) {
            result.status = LaunchResult::Status::ready;
            return result;
        }
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == pid) {
            std::remove(launch.pid_file.c_str());
            result.status = LaunchResult::Status::exited;
            result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            result.message = fmt::format("the daemon exited with code {}: {}", result.exit_code,
                                         last_log_line(launch.log_file));
            return result;
        }
    }
    result.status = LaunchResult::Status::not_ready;
    result.message = fmt::format("the daemon (pid {}) did not report ready within {}s; see {}", pid,
                                 launch.ready_timeout / k_us_per_second, launch.log_file);
    return result;
}

} // namespace gua::ops
