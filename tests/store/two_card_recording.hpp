// SPDX-License-Identifier: Apache-2.0
// Records a scenario of two cards through store::Writer, as the daemon writes ticks: the per-job
// summary tests build their databases with it.
#pragma once

#include "store/writer.hpp"

namespace gua::testing {

/// Writes `ticks` ticks of `tick_us` from `start` (host "node-1"), card i of tick k being
/// `card(i, t0, k)`, and finishes the run.
template <class CardOf>
void record_two_cards(store::Database& db, TimeUs start, DurationUs tick_us, int ticks,
                      CardOf card) {
    store::Writer w(db, store::RunInfo{"node-1", "d", "nvml", tick_us, 10.0, start});
    for (int k = 0; k < ticks; ++k) {
        telemetry::Tick t;
        t.seq = static_cast<std::uint64_t>(k);
        t.t0 = start + k * tick_us;
        t.duration_us = tick_us;
        t.cards = {card(0, t.t0, k), card(1, t.t0, k)};
        w.write(t);
    }
    w.finish(start + ticks * tick_us);
}

} // namespace gua::testing
