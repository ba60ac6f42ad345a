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

namespace gua::identity {

/// What gua knows about a live process: its identity and its start time (the pid-reuse guard).
struct ProcessFacts {
    telemetry::Identity identity;
    /// Start time in clock ticks since boot (/proc/<pid>/stat field 22); nullopt if vanished.
    std::optional<std::uint64_t> start_ticks;
};

/// Resolves pids through `proc_root` (normally "/proc"). A vanished pid resolves to the unknown
/// identity, never an error. Results are cached by (pid, start time), so a reused pid is
/// re-resolved. Not thread-safe: use one Resolver from one thread.
class Resolver {
  public:
    /// `first_person_uid` is the lowest uid of people, for the sudo rule of attributed_uid().
    explicit Resolver(std::string proc_root = "/proc",
                      std::uint32_t first_person_uid = k_first_person_uid);
    /// Looks up `pid`; cheap when cached (one read of /proc/<pid>/stat, re-resolved when its start
    /// time or comm changed).
    ProcessFacts resolve(std::uint32_t pid);
    /// Drops cache entries of pids not looked up since the previous call (call once per tick).
    void sweep();
    /// Number of processes currently cached.
    std::size_t cached_count() const { return m_cache.size(); }

  private:
    struct Entry {
        ProcessFacts facts;
        bool seen = true;
    };
    std::optional<ProcStat> read_stat(std::uint32_t pid) const;
    ProcessFacts resolve_uncached(std::uint32_t pid, const ProcStat& stat);
    std::string user_for(std::optional<std::uint32_t> uid);
    std::string pid_path(std::uint32_t pid, const char* file) const;

    std::string m_proc_root;
    std::uint32_t m_first_person_uid;
    std::unordered_map<std::uint32_t, Entry> m_cache;
    /// passwd names by uid; misses (nullopt) are forgotten at each sweep so new accounts appear.
    std::unordered_map<std::uint32_t, std::optional<std::string>> m_names;
};

} // namespace gua::identity
