// SPDX-License-Identifier: Apache-2.0
// Log lines for the driver oddities NvmlSource works around (lost ring samples, junk replies,
// process-list strides): the first occurrence of each kind at once, then at most one line per
// kind every ten minutes, so that a misbehaving driver is visible without flooding the log.
#pragma once

#include "core/time.hpp"
#include "nvml/card.hpp"

#include <array>
#include <functional>
#include <optional>
#include <string>

namespace gua::nvml {

/// Receives one log line.
using NoticeSink = std::function<void(const std::string&)>;

/// Rate-limited reporting of the growth of NvmlDiagnostics.
class DiagnosticNotices {
  public:
    /// Minimum time between two lines of the same kind.
    static constexpr DurationUs k_quiet_us = 10 * k_us_per_minute;

    /// Lines go to `sink` (the daemon's log); without one nothing is written.
    void set_sink(NoticeSink sink) { m_sink = std::move(sink); }

    /// Compares `counts` with what was last reported and writes a line for each kind that grew,
    /// unless a line of that kind was written less than k_quiet_us before `now` (its growth is
    /// then reported with the next line). `poll_span_us`: the poll span now used.
    void update(const NvmlDiagnostics& counts, TimeUs now, DurationUs poll_span_us);
    /// Writes `line` now (cards appearing, disappearing or not opening: rare, never throttled).
    void say(const std::string& line) const {
        if (m_sink) {
            m_sink(line);
        }
    }
    /// True when lines go somewhere.
    bool has_sink() const { return static_cast<bool>(m_sink); }

  private:
    enum Kind : std::size_t {
        lost,
        junk_util,
        junk_process,
        unlisted_process,
        stride,
        dropped,
        power,
        k_kinds
    };
    bool due(Kind kind, TimeUs now) const;
    void emit(Kind kind, TimeUs now, const std::string& line);

    NoticeSink m_sink;
    NvmlDiagnostics m_reported;
    std::array<std::optional<TimeUs>, k_kinds> m_last_line{};
};

} // namespace gua::nvml
