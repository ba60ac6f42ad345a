// SPDX-License-Identifier: Apache-2.0
// `gua report --prometheus URL`: the report of a whole fleet from a Prometheus server.
#pragma once

#include "cli/report_options.hpp"
#include "fleet/fleet.hpp"
#include "report/build.hpp"

namespace CLI {
class App;
}

namespace gua::cli {

/// Adds --prometheus, --source, --host-label and --step to `cmd`.
void add_fleet_flags(CLI::App& cmd, report::FleetOptions& fleet);

/// Builds the fleet report for `options` and prints it like print_report. Returns the exit code.
int print_fleet_report(const report::FleetOptions& fleet, const report::BuildOptions& options,
                       const ReportFlags& flags);

} // namespace gua::cli
