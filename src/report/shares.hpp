// The arithmetic that turns state and bucket times into report shares, shared by every report
// source (SQLite store, Prometheus counters, dcgm-exporter gauges).
#pragma once

#include "audit/classify.hpp"
#include "report/model.hpp"

#include <array>
#include <string>

namespace gua::report {

/// Shares of measured time (active + idle-held + truly idle) and the hours of each state.
StateShares shares_of(const audit::StateTimes& t);

/// Efficiency bucket shares (sum to 1, or all 0 when nothing was measured).
std::array<double, 4> bucket_shares(const std::array<DurationUs, 4>& b);

/// A heatmap cell from the state times that fell in it (empty when there were none).
HeatCell heat_cell(const audit::StateTimes& t);

/// "GPU-0a7c3e1f": the prefix and the first 8 hex digits of a uuid.
std::string short_uuid(const std::string& uuid);

} // namespace gua::report
