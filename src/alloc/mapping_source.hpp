// SPDX-License-Identifier: Apache-2.0
// MappingDirSource: a job-mapping directory watched with inotify, its edges timed as they happen.
#pragma once

#include "alloc/source.hpp"
#include "alloc/timeline.hpp"
#include "core/fd.hpp"

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace gua::alloc {

/// Watches one mapping directory on a thread of its own: each inotify event (or, at the latest,
/// every `rescan_us`) rescans the directory and records the reading with the wall time it was
/// taken; a directory that is missing or unreadable is recorded as such (unknown) and retried.
class MappingDirSource final : public AllocationSource {
  public:
    /// Starts watching `dir`; `clock` gives the wall time (tests pass their own).
    MappingDirSource(std::string dir, DurationUs rescan_us = k_us_per_second,
                     std::function<TimeUs()> clock = wall_now);
    ~MappingDirSource() override;
    MappingDirSource(const MappingDirSource&) = delete;
    MappingDirSource& operator=(const MappingDirSource&) = delete;

    std::string describe() const override;
    std::vector<Segment> query(const CardQuery& card, TimeUs begin, TimeUs end) const override;
    void forget_before(TimeUs before) override;
    /// The number of rescans so far (tests wait on it instead of sleeping blindly).
    std::uint64_t scans() const;

  private:
    void run(std::stop_token stop);
    void rescan();
    bool add_watch();

    std::string m_dir;
    DurationUs m_rescan_us;
    std::function<TimeUs()> m_clock;
    UniqueFd m_inotify;
    UniqueFd m_wake; // eventfd: written on stop
    int m_watch = -1;
    mutable std::mutex m_mutex;
    Timeline m_timeline;
    std::uint64_t m_scans = 0;
    std::jthread m_thread; // last: started after every member above exists
};

} // namespace gua::alloc
