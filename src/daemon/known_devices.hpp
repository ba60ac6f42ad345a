// SPDX-License-Identifier: Apache-2.0
// The cards a database has recorded before, for the device source to recognise a card that does
// not open when the daemon starts (docs/measurement.md, "Cards that come and go").
#pragma once

#include "store/database.hpp"
#include "telemetry/model.hpp"

#include <vector>

namespace gua::daemon {

/// Every card in `db`'s gpu table with its last recorded index, in the order the database first
/// registered them (the most recent last).
std::vector<telemetry::DeviceInfo> recorded_devices(store::Database& db);

} // namespace gua::daemon
