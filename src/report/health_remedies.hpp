// SPDX-License-Identifier: Apache-2.0
// §8's health remedies: what to do about each kind of §9 finding, with what it is worth.
#pragma once

#include "report/model.hpp"
#include "store/reader.hpp"

#include <vector>

namespace gua::report {

/// One remedy per finding id in `h.findings`, with the findings' details as evidence and a worth
/// from the cards' §9 figures, priced with `prices` (§7's rows, matched by driver index) and the
/// cards' memory totals in `gpus`. Sorted by the larger of its cents, then id.
std::vector<HealthRemedy> health_remedies(const HealthSection& h,
                                          const std::vector<GpuCostRow>& prices,
                                          const std::vector<store::GpuRow>& gpus);

} // namespace gua::report
