// SPDX-License-Identifier: Apache-2.0
// §7 cost and §8 recommendations of a report, from the window's accumulated totals.
#pragma once

#include "audit/mig.hpp"
#include "audit/window.hpp"
#include "report/build.hpp"
#include "report/model.hpp"
#include "store/reader.hpp"

#include <vector>

namespace gua::report {

/// §7's card rows: each card priced and added to the section's total and run-rates.
class CardCostTable {
  public:
    /// Starts `cost` afresh with `pricing`'s currency, source and spot discount.
    CardCostTable(CostSection& cost, const audit::Pricing& pricing);

    /// Adds a card's row (after those already added) at `price`.
    void add(int index, const std::string& model, const audit::CardPrice& price,
             const audit::StateTimes& states);

    /// Sets the waste run-rates from every card added, at each card's own rate.
    void finish();

  private:
    CostSection& m_cost;
    double m_idle_held_hourly = 0;
    double m_truly_idle_hourly = 0;
    double m_allocated_unused_hourly = 0;
};

/// Prices the window (per card, per identity group, run-rates) into `m.cost`, builds the
/// allocation section (allocated-unused priced to its owners) into `m.allocation` and runs the
/// recommender into `m.advice`. `m.gpus` and `m.identities` must already be filled;
/// `recorded_us` is the wall time with data in the window.
void build_cost_and_advice(const audit::WindowAccumulator& acc, const WindowTables& tables,
                           const BuildOptions& options, DurationUs recorded_us, ReportModel& m);

} // namespace gua::report
