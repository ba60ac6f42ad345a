// SPDX-License-Identifier: Apache-2.0
// The §9 health counters of one card in /metrics: the sums of audit::HealthTotals, so that a
// fleet report rebuilds the hosts' own §9 from them (fleet/health.cpp reads them back).
#pragma once

#include "audit/health.hpp"
#include "export/exposition.hpp"

namespace gua::exporter {

/// Appends `h`'s series for the card labelled `card` (gpu, uuid); a group of series appears once
/// its reading was read (energy, clock events, SM clock, memory, ghost memory, load, each GPM
/// metric), so a card without a reading has no series rather than zeros.
void add_health_series(Exposition& e, const Labels& card, const audit::HealthTotals& h);

} // namespace gua::exporter
