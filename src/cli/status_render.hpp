// SPDX-License-Identifier: Apache-2.0
// Rendering `gua status` as text or JSON from what was found.
#pragma once

#include "cli/ops_context.hpp"
#include "ops/db_summary.hpp"
#include "ops/installation.hpp"

#include <string>

namespace gua::cli {

/// Everything `gua status` shows.
struct StatusView {
    OpsContext context;
    ops::Installation installed;
    ops::DatabaseSummary database;
    TimeUs now = 0;
};

/// Aligned "label  value" lines after a one-line verdict.
std::string render_status_text(const StatusView& view);

/// The layout version of `gua status --format json` (key schema_version); raised when it changes.
inline constexpr int k_status_json_schema_version = 1;

/// One JSON object (keys: schema_version, running, mode, pid, since, stale_pid_file, service,
/// database, ...).
std::string render_status_json(const StatusView& view);

} // namespace gua::cli
