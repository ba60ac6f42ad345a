// identity::Resolver: pid → Identity from a real /proc, cached by (pid, start time).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "telemetry/identity.hpp"

namespace gua::identity {

/// What gua knows about a live process: its identity and its start time (the pid-reuse guard).
struct ProcessFacts {
    telemetry::Identity identity;
    /// Start time in clock ticks since boot (/proc/<pid>/stat field 22); nullopt if vanished.
    std::optional<std::uint64_t> start_ticks;
};

/// Resolves pids through `proc_root` (normally "/proc"). A vanished pid resolves to the unknown
/// identity, never an error. Results are cached by (pid, start time), so a reused pid is
/// re-resolved.
class Resolver {
  public:
    explicit Resolver(std::string proc_root = "/proc");
    /// Looks up `pid`; cheap when cached (one read of /proc/<pid>/stat).
    ProcessFacts resolve(std::uint32_t pid);
    /// Drops cache entries of pids not looked up since the previous call (call once per tick).
    void sweep();

  private:
    struct Entry {
        ProcessFacts facts;
        bool seen = true;
    };
    std::string m_proc_root;
    std::unordered_map<std::uint32_t, Entry> m_cache;
};

} // namespace gua::identity
