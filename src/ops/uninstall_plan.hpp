// SPDX-License-Identifier: Apache-2.0
// What `gua uninstall` does: stop the daemon, disable and remove the service gua installed,
// and keep the database unless purging.
#pragma once

#include "core/time.hpp"
#include "ops/installation.hpp"
#include "ops/plan.hpp"

#include <string>
#include <vector>

namespace gua::ops {

/// The uninstall steps. The unit is removed only when gua wrote it (<root>/etc/systemd/system);
/// a unit from the Debian package is disabled and left to dpkg. With `purge`, the database
/// (and its -wal, -shm and .lock files), the log, and a configuration file not owned by the
/// package are removed too.
std::vector<Step> plan_uninstall(const Paths& paths, const std::string& db,
                                 const Installation& installed, const Systemctl& systemctl,
                                 bool purge, DurationUs timeout);

} // namespace gua::ops
