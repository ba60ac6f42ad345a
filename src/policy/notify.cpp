// SPDX-License-Identifier: Apache-2.0
// notify's three parts: environment, command (posix_spawn, in a clean process state) and
// terminals (utmp).
#include "policy/notify.hpp"

#include "core/duration.hpp"
#include "core/units.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utmpx.h>

extern char** environ;

namespace gua::policy {

namespace {

std::string join(const std::vector<GpuRef>& gpus, bool uuids) {
    std::string out;
    for (const GpuRef& g : gpus) {
        out += (out.empty() ? "" : ",") + (uuids ? g.uuid : std::to_string(g.index));
    }
    return out;
}

} // namespace

std::vector<std::string> decision_environment(const Decision& d, const std::string& host) {
    const Candidate& c = d.candidate;
    const telemetry::Identity& id = c.identity;
    return {
        "GUA_USER=" + id.user,
        "GUA_UID=" + (id.uid ? std::to_string(*id.uid) : std::string()),
        "GUA_PID=" + std::to_string(c.process.pid),
        "GUA_START_TICKS=" + (c.process.start_ticks ? std::to_string(*c.process.start_ticks) : ""),
        "GUA_COMMAND=" + id.command,
        "GUA_GPU=" + join(c.gpus, false),
        "GUA_GPU_UUID=" + join(c.gpus, true),
        "GUA_MEMORY_MIB=" + (c.memory_mib ? std::to_string(*c.memory_mib) : std::string()),
        "GUA_IDLE_SECONDS=" + std::to_string(c.idle_us / k_us_per_second),
        "GUA_RULE=" + d.rule,
        "GUA_ACTION=" + std::string(to_string(d.action)),
        "GUA_CONTAINER=" + id.container_id,
        "GUA_SLURM_JOB=" + id.slurm_job,
        "GUA_JUPYTER_KERNEL=" + id.jupyter_kernel,
        "GUA_HOST=" + host,
        "GUA_MESSAGE=" + decision_message(d),
    };
}

std::string decision_message(const Decision& d) {
    const Candidate& c = d.candidate;
    const std::string held =
        c.memory_mib ? format_gib(static_cast<double>(*c.memory_mib)) : std::string("memory");
    const std::string gpus = join(c.gpus, false);
    return fmt::format("gua: your process {} ({}) has held {} on GPU {} idle for {} (policy rule "
                       "\"{}\"). Please free the GPU.",
                       c.process.pid, c.identity.command, held, gpus, format_duration(c.idle_us),
                       d.rule);
}

Result<pid_t> spawn_shell(const std::string& command, const std::vector<std::string>& extra) {
    std::vector<std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        if (std::strncmp(*e, "GUA_", 4) != 0) {
            env.emplace_back(*e);
        }
    }
    env.insert(env.end(), extra.begin(), extra.end());
    std::vector<char*> envp;
    envp.reserve(env.size() + 1);
    for (std::string& e : env) {
        envp.push_back(e.data());
    }
    envp.push_back(nullptr);
    std::string sh = "sh";
    std::string dash_c = "-c";
    std::string cmd = command;
    char* argv[] = {sh.data(), dash_c.data(), cmd.data(), nullptr};
    // The command starts from a clean process state: default signal dispositions (the daemon
    // ignores SIGPIPE), an empty signal mask, no descriptor beyond 0-2, and no ambient
    // capabilities (the service's CAP_KILL must not pass to a shell command). The ambient set
    // only matters across execve and is per thread, so clearing it here costs the daemon nothing.
    ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t all;
    sigset_t none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, "/bin/sh", &actions, &attr, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        return Error{fmt::format("cannot start /bin/sh: {}", std::strerror(rc))};
    }
    return pid;
}

int write_to_terminals(const std::string& utmp_path, const std::string& dev_root, std::uint32_t uid,
                       const std::string& message) {
    if (utmpxname(utmp_path.c_str()) != 0) {
        return 0;
    }
    std::vector<std::string> lines;
    setutxent();
    while (const utmpx* u = getutxent()) {
        if (u->ut_type == USER_PROCESS && u->ut_line[0] != '\0') {
            lines.emplace_back(u->ut_line, strnlen(u->ut_line, sizeof(u->ut_line)));
        }
    }
    endutxent();
    const std::string text = "\r\n" + message + "\r\n";
    int written = 0;
    for (const std::string& line : lines) {
        if (line.find("..") != std::string::npos) {
            continue;
        }
        std::string device = dev_root;
        device += '/';
        device += line;
        const int fd = ::open(device.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
            continue;
        }
        // Group-writable is how `mesg y` reads; `mesg n` is respected even by a root daemon.
        struct stat st {};
        if (::fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_uid == uid &&
            (st.st_mode & S_IWGRP) != 0 &&
            ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size())) {
            ++written;
        }
        ::close(fd);
    }
    return written;
}

} // namespace gua::policy
