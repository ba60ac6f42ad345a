// SPDX-License-Identifier: Apache-2.0
// §9 health of a report, from the window's accumulated totals.
#pragma once

#include "audit/window.hpp"
#include "report/build.hpp"
#include "report/model.hpp"
#include "store/reader.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gua::report {

/// One card's §9 input: what it is, its state times and its health totals.
struct CardHealthInput {
    int index = 0;
    std::string uuid;
    std::string model;
    std::string host; ///< fleet reports: the host, named in the card's findings; "" for one host
    audit::StateTimes states;
    audit::HealthTotals health;
    std::optional<std::int64_t> micros_per_gpu_hour; ///< §7's price of the card, when priced
};

/// §9's card rows (in `cards`' order), their findings and the figures of all cards together,
/// energy priced with options.energy in options.pricing's currency. Identities, imbalance and
/// remedies are the caller's.
HealthSection build_card_health(const std::vector<CardHealthInput>& cards,
                                const BuildOptions& options);

/// Fills `m.health` from the cards' and identities' health totals: energy per card, state and
/// identity, priced with options.energy in options.pricing's currency. `m.gpus` and
/// `m.identities` must already be filled (their order is kept).
void build_health(const audit::WindowAccumulator& acc, const std::vector<store::GpuRow>& gpus,
                  const std::vector<store::IdentityRow>& identities, const BuildOptions& options,
                  ReportModel& m);

} // namespace gua::report
