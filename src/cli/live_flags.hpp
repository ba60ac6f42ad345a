// SPDX-License-Identifier: Apache-2.0
// Flags and set-up shared by `gua now` and `gua top`: database, config, NVML library, windows.
#pragma once

#include "live/source.hpp"
#include "store/database.hpp"

#include <memory>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace gua::cli {

/// The flags of the live commands.
struct LiveFlags {
    std::string db;
    std::string config;
    std::string nvml_library;
    std::string window = "10m";  ///< per-GPU bar window
    std::string history = "10m"; ///< per-GPU history line window (10s to 24h)
    std::string sample = "3s";   ///< sampling length without a daemon (`gua now`)
    std::string color = "auto";  ///< --color: auto, always or never
};

/// Adds --db, --config, --nvml-library, --window, --history and --color to `cmd`.
void add_live_flags(CLI::App& cmd, LiveFlags& flags);

/// Thresholds from the config file and the windows from the flags; throws Fatal on bad input.
live::LiveOptions live_options(const LiveFlags& flags);

/// The database of the live commands, if there is one with gua data.
struct LiveDatabase {
    std::unique_ptr<store::Database> db; ///< nullptr: missing, or created but still empty
    std::string path;                    ///< where it was looked for; empty when nowhere
};

/// Opens the database to read (--db, else the default read path) read-only when it exists and
/// holds gua data. Throws Fatal for a file that is not a gua database.
LiveDatabase open_live_database(const LiveFlags& flags);

/// Why gua samples NVML itself: "no daemon is recording" and what the database showed.
std::string no_daemon_reason(const LiveDatabase& db, const store::RecentState& recent, TimeUs now);

/// Opens NVML for sampling; throws Fatal (exit code 3) naming why no daemon data was used.
std::unique_ptr<telemetry::DeviceSource> open_live_source(const LiveFlags& flags,
                                                          const std::string& why);

/// Parses a duration flag; throws Fatal naming the flag.
DurationUs duration_flag(const std::string& flag, const std::string& text);

/// Whether to print ANSI colours for --color `mode`: "always" yes, "never" no, "auto" when stdout
/// is a terminal and NO_COLOR is unset or empty (the flag, given on purpose, overrides NO_COLOR,
/// as no-color.org asks of command-line arguments).
bool stdout_color(const std::string& mode);

} // namespace gua::cli
