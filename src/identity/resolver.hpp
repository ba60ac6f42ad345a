// SPDX-License-Identifier: Apache-2.0
// identity::Resolver: pid → Identity from a real /proc, cached by (pid, start time).
#pragma once

#include "core/fd.hpp"
#include "identity/node_names.hpp"
#include "identity/proc_stat.hpp"
#include "identity/user.hpp"
#include "telemetry/identity.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gua::identity {

/// What gua knows about a live process: its identity and its start time (the pid-reuse guard).
struct ProcessFacts {
    telemetry::Identity identity;
    /// Start time in clock ticks since boot (/proc/<pid>/stat field 22); nullopt if vanished.
    std::optional<std::uint64_t> start_ticks;
    /// Differs from one resolution to the next, so an unchanged serial means unchanged facts (0 for
    /// the unknown identity of a vanished pid).
    std::uint64_t serial = 0;
    /// The per-tick time budget skipped naming its pod or container (NodeNames::k_budget_us):
    /// who it belongs to is not fully known until a later round names it (flagged, not guessed).
    bool names_deferred = false;
};

/// Resolves pids through `proc_root` (normally "/proc"). A vanished pid resolves to the unknown
/// identity, never an error. Results are cached by (pid, start time), so a reused pid is
/// re-resolved.
///
/// On procfs a cached process is watched through a pidfd and its open comm file (two descriptors,
/// for at most k_max_watched processes): the first lookup after each sweep() or notice_exits()
/// asks the kernel once (one epoll_wait, whatever the number of processes) which of them exited,
/// and a cache hit then costs no system call; the comm file is re-read at most every
/// `exec_check_us` per process to notice an exec (which also destroys the process's GPU contexts).
/// Without pidfds every hit reads the comm file; off procfs it reads stat. A pid that /proc does
/// not show (it exited, or lives in another pid namespace) is looked for again at most every
/// `exec_check_us` too, so a driver that keeps listing it costs nothing in between.
///
/// A process's pod and container names come from the node (identity::NodeNames) when it is first
/// resolved; one whose names were missing then is looked up again at most every
/// `names_retry_us`, and a name once found is never dropped. Not thread-safe: use one Resolver
/// from one thread.
class Resolver {
  public:
    /// Processes watched through descriptors at most (2 each); beyond, hits read stat.
    static constexpr std::size_t k_max_watched = 384;
    /// How often a process whose pod or container names are missing is looked up again.
    static constexpr std::int64_t k_names_retry_us = 30'000'000;
    /// `first_person_uid` is the lowest uid of people, for the sudo rule of attributed_uid();
    /// `node` says where the node's pod and container names are.
    explicit Resolver(std::string proc_root = "/proc",
                      std::uint32_t first_person_uid = k_first_person_uid,
                      std::int64_t exec_check_us = 1'000'000, const NodePaths& node = NodePaths{},
                      std::int64_t names_retry_us = k_names_retry_us);
    /// The resolver of this host's /proc, with the node's names where NodePaths::from_environment()
    /// says (the daemon's and `gua now`'s).
    static Resolver of_host() {
        return Resolver("/proc", k_first_person_uid, 1'000'000, NodePaths::from_environment());
    }
    /// Looks up `pid` (see the class comment for what a cache hit costs); re-resolved when the
    /// process exited (noticed at the first lookup after a sweep()) or its comm changed, and
    /// unknown without reading /proc while a recent lookup did not find it.
    /// The reference stays valid until the next call of resolve() or sweep().
    const ProcessFacts& resolve(std::uint32_t pid);
    /// Drops cache entries (and pids not found) not looked up since the previous call and starts
    /// a new round of lookups (call once per tick).
    void sweep();
    /// Makes the next lookup ask the kernel which watched processes exited since it was last
    /// asked, as the first lookup after sweep() does, so that a pid reused within a round is
    /// re-resolved (call once per poll). Keeps the cache and the round.
    void notice_exits() { m_exits_noticed = false; }
    /// Appends to `out` the watched processes (pid, start time) that exited since this was last
    /// asked, each once: one epoll_wait, none when no process is watched. Keeps the cache, so
    /// the sampler can place an exit between two polls (docs/measurement.md).
    void take_exits(std::vector<std::pair<std::uint32_t, std::uint64_t>>& out);
    /// True while processes are watched through pidfds (take_exits() can see them exit).
    bool watching() const { return m_epoll.valid() && m_watched > 0; }
    /// Number of processes currently cached.
    std::size_t cached_count() const { return m_cache.size(); }
    /// Number of pids remembered as not found.
    std::size_t absent_count() const { return m_absent.size(); }

  private:
    struct Entry {
        ProcessFacts facts;
        bool seen = true;
        /// /proc/<pid>/comm, open. On procfs it keeps naming the process it was opened for (reads
        /// fail once that process is gone, even if its pid was reused).
        UniqueFd comm;
        UniqueFd pidfd;             ///< registered with m_epoll; readable once the process exits
        std::int64_t comm_read = 0; ///< CLOCK_MONOTONIC µs of the last comm check
        /// CLOCK_MONOTONIC µs of the last names lookup while names_missing() (else nullopt).
        std::optional<std::int64_t> names_tried;
        bool exit_taken = false; ///< take_exits() reported its exit
    };
    /// True when `comm` is open, its process alive and named `name`.
    static bool names(const UniqueFd& comm, const std::string& name);
    bool hit(Entry& entry);
    void watch(std::uint32_t pid, Entry& entry, UniqueFd comm, UniqueFd pidfd);
    void forget(std::unordered_map<std::uint32_t, Entry>::iterator it);
    /// Looks up the missing names of a cached process again when names_retry_us passed.
    void retry_names(Entry& entry);
    void reap_exited();
    /// Forgets the watched processes that exited (one epoll_wait per batch).
    void collect_exits();
    std::optional<ProcStat> read_stat(std::uint32_t pid) const;
    ProcessFacts resolve_uncached(std::uint32_t pid, const ProcStat& stat);
    /// Remembers that `pid` was not found now and returns the unknown identity.
    const ProcessFacts& absent(std::uint32_t pid);
    std::string user_for(std::optional<std::uint32_t> uid);
    std::string pid_path(std::uint32_t pid, const char* file) const;

    std::string m_proc_root;
    bool m_procfs = false; ///< m_proc_root is a real procfs (the comm descriptor guarantee holds)
    std::uint32_t m_first_person_uid;
    std::int64_t m_exec_check_us;
    std::int64_t m_names_retry_us;
    NodeNames m_node_names;
    /// The pidfds of watched processes; invalid without pidfd support. Declared before m_cache,
    /// so it is closed after the pidfds in it.
    UniqueFd m_epoll;
    bool m_reaped = false;        ///< exits were collected since the last sweep()
    bool m_exits_noticed = false; ///< exits were collected since the last notice_exits()
    std::int64_t m_now_us = 0;    ///< CLOCK_MONOTONIC µs at the first lookup after sweep()
    std::size_t m_watched = 0;    ///< entries holding descriptors
    std::unordered_map<std::uint32_t, Entry> m_cache;
    /// A pid /proc did not show at a lookup.
    struct Absent {
        std::int64_t checked_us = 0; ///< CLOCK_MONOTONIC µs of that lookup
        bool seen = true;
    };
    std::unordered_map<std::uint32_t, Absent> m_absent;
    ProcessFacts m_unknown;     ///< what a vanished pid resolves to
    std::uint64_t m_serial = 0; ///< of the latest resolution
    /// passwd names by uid; misses (nullopt) are forgotten at each sweep so new accounts appear.
    std::unordered_map<std::uint32_t, std::optional<std::string>> m_names;
};

} // namespace gua::identity
