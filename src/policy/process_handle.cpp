// SPDX-License-Identifier: Apache-2.0
// pidfd_open + start-time check, pidfd_send_signal, and poll() for exit.
#include "policy/process_handle.hpp"

#include "identity/proc_file.hpp"
#include "identity/proc_stat.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <utility>

namespace gua::policy {

namespace {

int pidfd_send_signal(int pidfd, int signal) {
    return static_cast<int>(syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0U));
}

std::string errno_text(int err) {
    return std::strerror(err);
}

/// Errors unless `pid` is alive now with the expected start time.
Result<void> check(const std::string& proc_root, const audit::ProcessKey& process) {
    const std::optional<ProcState> now = read_proc_state(proc_root, process.pid);
    if (!now || now->state == 'Z' || now->state == 'X') {
        return Error{"gone", ErrorKind::gone};
    }
    if (!process.start_ticks || now->start_ticks != *process.start_ticks) {
        return Error{"pid reused"};
    }
    return {};
}

} // namespace

std::optional<ProcState> read_proc_state(const std::string& proc_root, std::uint32_t pid) {
    const Result<std::string> text =
        identity::read_proc_file(proc_root + "/" + std::to_string(pid) + "/stat", 4096);
    if (!text) {
        return std::nullopt;
    }
    const Result<identity::ProcStat> stat = identity::parse_proc_stat(text.value());
    const std::size_t close = text.value().rfind(')');
    if (!stat || close == std::string::npos || close + 2 >= text.value().size()) {
        return std::nullopt;
    }
    return ProcState{stat.value().start_ticks, text.value()[close + 2]};
}

ProcessHandle::ProcessHandle(std::string proc_root, audit::ProcessKey process, UniqueFd pidfd,
                             std::optional<std::uint32_t> uid)
    : m_proc_root(std::move(proc_root)), m_process(process), m_pidfd(std::move(pidfd)), m_uid(uid) {
}

Result<ProcessHandle> ProcessHandle::open(const std::string& proc_root,
                                          const audit::ProcessKey& process,
                                          std::optional<std::uint32_t> uid) {
    // Open first, check second: a match then proves the pidfd refers to the recorded process.
    UniqueFd pidfd(proc_root == "/proc" ? open_pidfd(process.pid) : -1);
    if (auto ok = check(proc_root, process); !ok) {
        return ok.error();
    }
    return ProcessHandle(proc_root, process, std::move(pidfd), uid);
}

bool ProcessHandle::exited() const {
    if (m_pidfd.valid()) {
        pollfd p{m_pidfd.get(), POLLIN, 0};
        return ::poll(&p, 1, 0) > 0;
    }
    return !check(m_proc_root, m_process).ok();
}

Result<void> ProcessHandle::uid_unchanged() const {
    if (!m_uid) {
        return {};
    }
    const Result<std::string> status = identity::read_proc_file(
        m_proc_root + "/" + std::to_string(m_process.pid) + "/status", 16384);
    if (!status) {
        return Error{"gone", ErrorKind::gone};
    }
    const Result<identity::StatusUids> uids = identity::parse_status_uids(status.value());
    if (!uids) {
        return Error{"uid unknown: " + uids.error().message};
    }
    // The start time read after status proves that status was this process's.
    if (auto ok = check(m_proc_root, m_process); !ok) {
        return ok.error();
    }
    const identity::StatusUids& u = uids.value();
    if (u.real != *m_uid || u.effective != *m_uid || u.saved != *m_uid) {
        return Error{fmt::format("uid changed: uids {}/{}/{} (real/effective/saved), the rule "
                                 "matched uid {}",
                                 u.real, u.effective, u.saved, *m_uid)};
    }
    return {};
}

Result<void> ProcessHandle::send(int signal) const {
    // Re-read right before signalling: a process alive (its pidfd not readable) still owns its
    // pid, so /proc/<pid> is still it.
    if (auto ok = check(m_proc_root, m_process); !ok) {
        return ok.error();
    }
    if (auto ok = uid_unchanged(); !ok) {
        return ok.error();
    }
    if (m_pidfd.valid()) {
        if (pidfd_send_signal(m_pidfd.get(), signal) != 0) {
            return errno == ESRCH ? Error{"gone", ErrorKind::gone} : Error{errno_text(errno)};
        }
        return {};
    }
    if (::kill(static_cast<pid_t>(m_process.pid), signal) != 0) {
        return errno == ESRCH ? Error{"gone", ErrorKind::gone} : Error{errno_text(errno)};
    }
    return {};
}

} // namespace gua::policy
