// §7 cost and §8 recommendations of a report, from the window's accumulated totals.
#pragma once

#include "audit/window.hpp"
#include "report/build.hpp"
#include "report/model.hpp"
#include "store/reader.hpp"

#include <vector>

namespace gua::report {

/// Prices the window (per card, per identity group, run-rates) into `m.cost` and runs the
/// recommender into `m.advice`. `m.gpus` and `m.identities` must already be filled; `recorded_us`
/// is the wall time with data in the window.
void build_cost_and_advice(const audit::WindowAccumulator& acc,
                           const std::vector<store::GpuRow>& gpus,
                           const std::vector<store::IdentityRow>& identities,
                           const BuildOptions& options, DurationUs recorded_us, ReportModel& m);

} // namespace gua::report
