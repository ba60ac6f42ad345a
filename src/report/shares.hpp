// SPDX-License-Identifier: Apache-2.0
// The arithmetic that turns state and bucket times into report shares, shared by every report
// source (SQLite store, Prometheus counters, dcgm-exporter gauges).
#pragma once

#include "audit/classify.hpp"
#include "audit/window.hpp"
#include "report/model.hpp"

#include <array>
#include <string>
#include <vector>

namespace gua::report {

/// Shares of all recorded time (active + idle-held + allocated-unused + truly idle + unmeasured)
/// and the hours of each state.
StateShares shares_of(const audit::StateTimes& t);

/// How the time of `states` was measured, from the audit's provenance of it (all zero where the
/// source records none: the measured time then counts as source_unknown); `overlap_us` is time
/// recorded twice and counted once.
ProvenanceShares provenance_of(const audit::StateTimes& states, const audit::Provenance& p,
                               DurationUs overlap_us);

/// Appends the notes a reader must see before trusting the shares: snapshot-measured time and
/// its error bound, card time recorded twice (counted once).
void add_provenance_notes(const ProvenanceShares& p, std::vector<std::string>& notes);
/// Appends the note on the driver's sample period when much of the time measured from driver
/// sample buffers lay in periods busy only 10–70 % (`buckets`: shares of measured time by
/// utilization): work shorter than a period is counted active for the whole period. Not for demo
/// data (no driver).
void add_sample_period_note(const ProvenanceShares& p, const std::array<double, 4>& buckets,
                            bool demo_data, std::vector<std::string>& notes);

/// Efficiency bucket shares (sum to 1, or all 0 when nothing was measured).
std::array<double, 4> bucket_shares(const std::array<DurationUs, 4>& b);

/// A heatmap cell from the state times that fell in it (empty when there were none).
HeatCell heat_cell(const audit::StateTimes& t);

/// "GPU-0a7c3e1f": the prefix and the first 8 hex digits of a uuid.
std::string short_uuid(const std::string& uuid);

} // namespace gua::report
