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
    std::string window = "10m"; ///< per-GPU bar window
    std::string sample = "3s";  ///< sampling length without a daemon (`gua now`)
};

/// Adds --db, --config, --nvml-library and --window to `cmd`.
void add_live_flags(CLI::App& cmd, LiveFlags& flags);

/// Thresholds from the config file and the windows from the flags; throws Fatal on bad input.
live::LiveOptions live_options(const LiveFlags& flags);

/// Opens the database to read (--db, else the default read path) when it exists and holds gua
/// data; nullptr otherwise. Throws Fatal for a --db that is missing or not a gua database.
std::unique_ptr<store::Database> open_live_database(const LiveFlags& flags);

/// Opens NVML for sampling; throws Fatal (exit code 3) naming why no daemon data was used.
std::unique_ptr<telemetry::DeviceSource> open_live_source(const LiveFlags& flags,
                                                          const std::string& why);

/// Parses a duration flag; throws Fatal naming the flag.
DurationUs duration_flag(const std::string& flag, const std::string& text);

/// True when stdout is a terminal and NO_COLOR is unset or empty.
bool stdout_color();

} // namespace gua::cli
