// identity::Resolver: pid → Identity from a real /proc, cached by (pid, start time).
#pragma once

#include "identity/proc_stat.hpp"
#include "identity/user.hpp"
#include "telemetry/identity.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace gua::identity {

/// What gua knows about a live process: its identity and its start time (the pid-reuse guard).
struct ProcessFacts {
    telemetry::Identity identity;
    /// Start time in clock ticks since boot (/proc/<pid>/stat field 22); nullopt if vanished.
    std::optional<std::uint64_t> start_ticks;
};

/// Resolves pids through `proc_root` (normally "/proc"). A vanished pid resolves to the unknown
/// identity, never an error. Results are cached by (pid, start time), so a reused pid is
/// re-resolved. On procfs a cached process keeps one open file descriptor (at most 512 in all).
/// Not thread-safe: use one Resolver from one thread.
class Resolver {
  public:
    /// `first_person_uid` is the lowest uid of people, for the sudo rule of attributed_uid().
    explicit Resolver(std::string proc_root = "/proc",
                      std::uint32_t first_person_uid = k_first_person_uid);
    /// Looks up `pid`; cheap when cached (one pread of the process's open comm file on procfs, else
    /// one read of /proc/<pid>/stat; re-resolved when the process changed or its comm did).
    ProcessFacts resolve(std::uint32_t pid);
    /// Drops cache entries of pids not looked up since the previous call (call once per tick).
    void sweep();
    /// Number of processes currently cached.
    std::size_t cached_count() const { return m_cache.size(); }

  private:
    /// An open /proc/<pid>/comm. On procfs the descriptor keeps naming the process it was opened
    /// for (reads fail once that process is gone, even if its pid was reused), so a cache hit
    /// costs one pread instead of open/read/close of stat.
    class CommFd {
      public:
        CommFd() = default;
        explicit CommFd(int fd) : m_fd(fd) {}
        CommFd(CommFd&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
        CommFd& operator=(CommFd&& other) noexcept;
        ~CommFd();
        /// True when the process is alive and its comm is `comm`.
        bool names(const std::string& comm) const;
        bool valid() const { return m_fd >= 0; }

      private:
        int m_fd = -1;
    };
    struct Entry {
        ProcessFacts facts;
        bool seen = true;
        CommFd comm; ///< invalid when not on procfs or when too many are open
    };
    CommFd open_comm(std::uint32_t pid) const;
    std::optional<ProcStat> read_stat(std::uint32_t pid) const;
    ProcessFacts resolve_uncached(std::uint32_t pid, const ProcStat& stat);
    std::string user_for(std::optional<std::uint32_t> uid);
    std::string pid_path(std::uint32_t pid, const char* file) const;

    std::string m_proc_root;
    bool m_procfs = false; ///< m_proc_root is a real procfs (CommFd's guarantee holds)
    std::uint32_t m_first_person_uid;
    std::unordered_map<std::uint32_t, Entry> m_cache;
    /// passwd names by uid; misses (nullopt) are forgotten at each sweep so new accounts appear.
    std::unordered_map<std::uint32_t, std::optional<std::string>> m_names;
};

} // namespace gua::identity
