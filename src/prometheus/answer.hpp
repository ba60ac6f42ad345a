// SPDX-License-Identifier: Apache-2.0
// Reading the answers of Prometheus's query API as a stream: each result series is handed over
// as soon as it is parsed, so a fleet-sized answer never becomes a JSON tree in memory. An answer
// is data to validate: its sizes are bounded and impossible values are refused.
#pragma once

#include "prometheus/api.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace gua::report {

/// What one answer of a Prometheus server may hold (docs/security.md); more is refused.
inline constexpr std::size_t k_prom_max_label_bytes = 4096;     ///< a label's name or value
inline constexpr std::size_t k_prom_max_labels = 64;            ///< labels of one series
inline constexpr std::size_t k_prom_max_points = 11000;         ///< points of one series
inline constexpr std::size_t k_prom_max_series = 1000000;       ///< series of one answer
inline constexpr std::size_t k_prom_max_label_values = 1000000; ///< values of a label list
/// The memory (resident set) a fleet report may reach while reading answers, in bytes: past it
/// the report stops with a one-line error instead of growing with what a server sends.
inline constexpr std::size_t k_prom_max_rss_bytes = 224UL * 1024 * 1024;

/// Receives one result series: its labels and its (time, value) points in the answer's order.
/// Either may be moved from.
using SeriesSink =
    std::function<void(PromLabels& labels, std::vector<std::pair<TimeUs, double>>& points)>;

/// Parses the body of an /api/v1/query or /api/v1/query_range answer (vector or matrix),
/// calling `sink` once per series. Throws Fatal with a one-line message naming `server` for an
/// error answer, a body that is not JSON, an unexpected structure, a time out of range, a value
/// that is not a finite number ≥ 0 (every query gua sends reads counters, gauges or times), a
/// series given twice, or an answer past the limits above (naming the series where there is
/// one); series already handed to `sink` are then to be discarded.
void parse_answer(const PromAnswer& answer, const std::string& server, const SeriesSink& sink);

/// Parses the body of an /api/v1/label/<name>/values answer: the list of values. Throws Fatal
/// (one line naming `server`) as parse_answer does, and for a value that is not text or a list
/// past the limits above.
std::vector<std::string> parse_label_values(const PromAnswer& answer, const std::string& server);

/// `labels` as Prometheus writes a series, `name{a="x", b="y"}`, with control characters,
/// quotes and backslashes escaped and long values shortened: one line for an error message.
std::string describe_series(const PromLabels& labels);

/// `text` on one line: control characters, bytes above 0x7f, quotes and backslashes escaped,
/// at most `shown` bytes of it (then "…").
std::string printable(const std::string& text, std::size_t shown);

/// The resident memory a fleet report may reach: k_prom_max_rss_bytes, or
/// $GUA_PROMETHEUS_MAX_RSS_MB MiB when that is set to a whole number above 0.
std::size_t prom_memory_limit();

/// Throws Fatal naming `server` when this process's resident memory is above
/// prom_memory_limit() (read from /proc/self/statm; nothing when it cannot be read).
void check_prom_memory(const std::string& server);

} // namespace gua::report
