// SPDX-License-Identifier: Apache-2.0
// What the operations subcommands (doctor, start, status, stop, uninstall) share: the --root
// option, the paths it implies, the configuration found there and the database it names.
#pragma once

#include "config/config.hpp"
#include "core/time.hpp"
#include "ops/paths.hpp"

#include <string>

namespace CLI {
class App;
}

namespace gua::cli {

/// Paths, configuration and database of one operations command.
struct OpsContext {
    ops::Paths paths;
    Result<config::Config> config = config::Config{};
    bool config_exists = false;
    std::string db; ///< [daemon] db from the config (inside the root), else paths.db
};

/// Adds `--root DIR` to `cmd`.
void add_root_option(CLI::App& cmd, std::string& root);

/// Adds `--timeout DURATION` (default `fallback`) to `cmd`.
void add_timeout_option(CLI::App& cmd, std::string& timeout, const std::string& fallback);

/// Parses a --timeout value; Fatal(usage) when it is not a duration.
DurationUs parse_timeout(const std::string& text);

/// The context for ops::paths `paths` (config read, not required to be valid).
OpsContext context_for(const ops::Paths& paths);

/// The context for `--root` (empty: the live system; system scope as root, user scope else).
OpsContext load_ops_context(const std::string& root);

/// The absolute path of the running gua binary.
std::string self_exe();

} // namespace gua::cli
