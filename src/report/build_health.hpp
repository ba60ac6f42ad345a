// SPDX-License-Identifier: Apache-2.0
// §9 health of a report, from the window's accumulated totals.
#pragma once

#include "audit/window.hpp"
#include "report/build.hpp"
#include "report/model.hpp"
#include "store/reader.hpp"

#include <vector>

namespace gua::report {

/// Fills `m.health` from the cards' and identities' health totals: energy per card, state and
/// identity, priced with options.energy in options.pricing's currency. `m.gpus` and
/// `m.identities` must already be filled (their order is kept).
void build_health(const audit::WindowAccumulator& acc, const std::vector<store::GpuRow>& gpus,
                  const std::vector<store::IdentityRow>& identities, const BuildOptions& options,
                  ReportModel& m);

} // namespace gua::report
