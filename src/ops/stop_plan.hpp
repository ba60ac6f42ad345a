// SPDX-License-Identifier: Apache-2.0
// What `gua stop` does: stop the daemon whichever way it was started (systemd, background pid
// file, or a foreground `gua daemon` holding the database lock) and wait for its final flush.
#pragma once

#include "core/time.hpp"
#include "ops/installation.hpp"
#include "ops/plan.hpp"

#include <string>
#include <vector>

namespace gua::ops {

/// The steps that stop the daemon recording to `db`; empty when nothing runs and no stale pid
/// file is left. Each waits up to `timeout` for the daemon to exit.
std::vector<Step> plan_stop(const Paths& paths, const std::string& db,
                            const Installation& installed, const Systemctl& systemctl,
                            DurationUs timeout);

/// One line about the daemon's last run in `db`: "final flush at T (run N ended)", or a
/// warning that the last run has no end (it did not stop cleanly); empty without a database.
std::string final_flush_summary(const std::string& db);

} // namespace gua::ops
