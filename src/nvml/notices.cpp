// SPDX-License-Identifier: Apache-2.0
// Rate-limited log lines for driver oddities (see notices.hpp).
#include "nvml/notices.hpp"

#include <fmt/format.h>

namespace gua::nvml {

bool DiagnosticNotices::due(Kind kind, TimeUs now) const {
    const std::optional<TimeUs>& last = m_last_line[kind];
    return !last || now - *last >= k_quiet_us;
}

void DiagnosticNotices::emit(Kind kind, TimeUs now, const std::string& line) {
    m_last_line[kind] = now;
    if (m_sink) {
        m_sink(line);
    }
}

void DiagnosticNotices::update(const NvmlDiagnostics& counts, TimeUs now, DurationUs poll_span_us) {
    if (!m_sink) {
        return; // nobody to tell (one-shot commands); the counters still grow
    }
    NvmlDiagnostics& r = m_reported;
    if (counts.lost_sample_batches > r.lost_sample_batches && due(lost, now)) {
        emit(lost, now,
             fmt::format("NVML: the utilization sample buffer overflowed between polls {} "
                         "time(s) ({:.1f} s recorded as unmeasured since the last notice); "
                         "polling every {:.2f} s now",
                         counts.lost_sample_batches - r.lost_sample_batches,
                         static_cast<double>(counts.unmeasured_us - r.unmeasured_us) / 1e6,
                         static_cast<double>(poll_span_us) / 1e6));
        r.lost_sample_batches = counts.lost_sample_batches;
        r.unmeasured_us = counts.unmeasured_us;
    }
    if (counts.junk_util_samples > r.junk_util_samples && due(junk_util, now)) {
        emit(junk_util, now,
             fmt::format("NVML: dropped {} utilization sample(s) over 100 % (driver junk; their "
                         "time is recorded as unmeasured)",
                         counts.junk_util_samples - r.junk_util_samples));
        r.junk_util_samples = counts.junk_util_samples;
    }
    if (counts.junk_process_samples > r.junk_process_samples && due(junk_process, now)) {
        emit(junk_process, now,
             fmt::format("NVML: dropped {} per-process utilization entr(y/ies) over 100 % "
                         "(driver junk)",
                         counts.junk_process_samples - r.junk_process_samples));
        r.junk_process_samples = counts.junk_process_samples;
    }
    if (counts.unlisted_process_samples > r.unlisted_process_samples &&
        due(unlisted_process, now)) {
        emit(unlisted_process, now,
             fmt::format("NVML: left out {} per-process utilization entr(y/ies) for pids not in "
                         "the poll's process lists (a process that ended before its list was "
                         "read, or a pid no list shows); not attributed to anyone",
                         counts.unlisted_process_samples - r.unlisted_process_samples));
        r.unlisted_process_samples = counts.unlisted_process_samples;
    }
    if (counts.stride_corrections > r.stride_corrections && due(stride, now)) {
        emit(stride, now,
             fmt::format("NVML: the running-process list entry size did not match the driver's "
                         "symbol version; corrected {} time(s)",
                         counts.stride_corrections - r.stride_corrections));
        r.stride_corrections = counts.stride_corrections;
    }
    if (counts.dropped_process_entries > r.dropped_process_entries && due(dropped, now)) {
        emit(dropped, now,
             fmt::format("NVML: left out {} implausible running-process entr(y/ies)",
                         counts.dropped_process_entries - r.dropped_process_entries));
        r.dropped_process_entries = counts.dropped_process_entries;
    }
    if (counts.junk_power_readings > r.junk_power_readings && due(power, now)) {
        emit(power, now,
             fmt::format("NVML: dropped {} power reading(s) outside what a card can draw (driver "
                         "junk; not stored, not priced)",
                         counts.junk_power_readings - r.junk_power_readings));
        r.junk_power_readings = counts.junk_power_readings;
    }
}

} // namespace gua::nvml
