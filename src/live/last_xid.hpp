// SPDX-License-Identifier: Apache-2.0
// Each card's newest driver fault (Xid) of a recent window, from the daemon's fault table, for
// `gua now` and `gua top`.
#pragma once

#include "core/time.hpp"
#include "live/model.hpp"
#include "store/database.hpp"
#include "telemetry/fault_event.hpp"

#include <vector>

namespace gua::live {

/// The faults stored in `db` from `from` on, oldest first; none when the file has no fault table
/// or it cannot be read (the live view never fails for want of them).
std::vector<telemetry::FaultEvent> faults_since(store::Database& db, TimeUs from);

/// Sets each GPU's last_xid to the newest of `events` on it (a MIG instance also takes its GPU's
/// whole-card faults) within [model.now - window_us, model.now], and model.xid_window_us to
/// `window_us`. Events that name no card, and gua's own "GPU missing" record, are skipped.
void attach_last_xids(NowModel& model, const std::vector<telemetry::FaultEvent>& events,
                      DurationUs window_us);

} // namespace gua::live
