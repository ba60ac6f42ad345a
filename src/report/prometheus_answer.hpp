// SPDX-License-Identifier: Apache-2.0
// Reading the answers of Prometheus's query API as a stream: each result series is handed over
// as soon as it is parsed, so a fleet-sized answer never becomes a JSON tree in memory.
#pragma once

#include "report/prometheus_api.hpp"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace gua::report {

/// Receives one result series: its labels and its (time, value) points in the answer's order,
/// NaN and ±Inf left out. Either may be moved from.
using SeriesSink =
    std::function<void(PromLabels& labels, std::vector<std::pair<TimeUs, double>>& points)>;

/// Parses the body of an /api/v1/query or /api/v1/query_range answer (vector or matrix),
/// calling `sink` once per series. Throws Fatal with a one-line message naming `server` for an
/// error answer, a body that is not JSON, an unexpected structure, a value that is not a
/// number or a time out of range; series already handed to `sink` are then to be discarded.
void parse_answer(const PromAnswer& answer, const std::string& server, const SeriesSink& sink);

} // namespace gua::report
