// SPDX-License-Identifier: Apache-2.0
// `gua now --prometheus URL` and `gua top --prometheus URL`: the fleet view's flags, its printing
// and its read-only refreshing screen.
#pragma once

#include "cli/live_flags.hpp"
#include "core/time.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace gua::cli {

/// The fleet flags of `gua now` and `gua top`.
struct FleetNowFlags {
    std::string url;                              ///< --prometheus; empty: the local view
    std::string host_label = "instance";          ///< --host-label
    DurationUs timeout_us = 30 * k_us_per_second; ///< --prometheus-timeout, per view
};

/// Adds --prometheus, --host-label and --prometheus-timeout to `cmd` (after add_live_flags:
/// --prometheus excludes --db and --nvml-library).
void add_fleet_now_flags(CLI::App& cmd, FleetNowFlags& flags);

/// Prints the fleet view once (`format` text or json). Returns the exit code.
int print_fleet_now(const FleetNowFlags& fleet, const LiveFlags& flags, const std::string& format);

/// Shows the fleet view every `refresh_us` until q (or `count` frames). Returns the exit code.
int run_fleet_top(const FleetNowFlags& fleet, const LiveFlags& flags, DurationUs refresh_us,
                  std::optional<std::uint64_t> count);

} // namespace gua::cli
