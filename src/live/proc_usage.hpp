// SPDX-License-Identifier: Apache-2.0
// What a holder process costs the host, for `gua top`: CPU % over the refresh interval and resident
// memory from /proc/<pid>/stat and status, and its parent for the process tree.
#pragma once

#include "live/model.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace gua::live {

/// One reading of /proc/<pid>.
struct ProcSample {
    std::uint32_t ppid = 0;
    std::uint64_t cpu_ticks = 0;   ///< utime + stime, in clock ticks
    std::uint64_t start_ticks = 0; ///< field 22
    std::optional<std::int64_t> rss_kib;
    std::optional<std::uint32_t> uid; ///< real uid
    std::string comm;
};

/// Parses /proc/<pid>/stat text (fields read after the last ')'); nullopt when malformed.
std::optional<ProcSample> parse_stat_sample(std::string_view stat);

/// Reads /proc/<pid>/stat and status under `proc_root`; nullopt when the process is gone.
std::optional<ProcSample> read_proc_sample(std::uint32_t pid,
                                           const std::string& proc_root = "/proc");

/// Fills each holder's cpu_pct (over the time since the previous measure() that saw the same
/// process, pid and start time), rss_kib and ppid, and sets the model's host_columns. The first
/// sight of a process has no CPU %.
class CpuMeter {
  public:
    explicit CpuMeter(std::string proc_root = "/proc") : m_root(std::move(proc_root)) {}
    void measure(NowModel& model, std::int64_t mono_us);

  private:
    struct Seen {
        std::uint64_t cpu_ticks = 0;
        std::int64_t mono_us = 0;
    };
    std::string m_root;
    std::map<std::pair<std::uint32_t, std::uint64_t>, Seen> m_seen;
};

} // namespace gua::live
