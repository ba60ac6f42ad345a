// SPDX-License-Identifier: Apache-2.0
// A handle on exactly one process: opened only after its /proc start time matched the recorded
// one, and (where the kernel has pidfds) immune to the pid being reused afterwards.
#pragma once

#include "audit/streak.hpp"
#include "core/fd.hpp"
#include "core/result.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace gua::policy {

/// What /proc says about a pid now.
struct ProcState {
    std::uint64_t start_ticks = 0;
    char state = '?'; ///< the state letter of /proc/<pid>/stat ('Z' = zombie)
};

/// Reads `<proc_root>/<pid>/stat`; nullopt when the pid does not exist (or cannot be parsed).
std::optional<ProcState> read_proc_state(const std::string& proc_root, std::uint32_t pid);

/// An open handle on one process. Move-only (it owns its pidfd).
class ProcessHandle {
  public:
    /// Opens `process` (which must have a start time) under `proc_root`. Errors: ErrorKind::gone
    /// ("gone") when the pid does not exist or is a zombie, "pid reused" when its start time
    /// differs. `uid`, when set, is the uid the decision was made for: see uid_unchanged().
    static Result<ProcessHandle> open(const std::string& proc_root,
                                      const audit::ProcessKey& process,
                                      std::optional<std::uint32_t> uid = std::nullopt);

    /// True once the process has terminated (exited, or a zombie not yet reaped).
    bool exited() const;
    /// Errors ("uid changed: …") unless the process's real, effective and saved uids are all the
    /// uid given to open() (when one was), read now; "gone" when it has gone.
    Result<void> uid_unchanged() const;
    /// Sends `signal` to this process after re-checking, immediately before, its start time and
    /// its uids (as open() does: a process that took another uid, e.g. regained root through its
    /// saved uid, is not signalled); through the pidfd, else kill(). Errors name the failure.
    Result<void> send(int signal) const;
    const audit::ProcessKey& process() const { return m_process; }

  private:
    ProcessHandle(std::string proc_root, audit::ProcessKey process, UniqueFd pidfd,
                  std::optional<std::uint32_t> uid);

    std::string m_proc_root;
    audit::ProcessKey m_process;
    UniqueFd m_pidfd;                   ///< invalid without pidfd support or off the real /proc
    std::optional<std::uint32_t> m_uid; ///< the uid it must still have when signalled
};

} // namespace gua::policy
