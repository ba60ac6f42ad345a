// SPDX-License-Identifier: Apache-2.0
// Running a helper program (systemctl, useradd) and collecting what it printed.
#pragma once

#include <string>
#include <vector>

namespace gua::ops {

/// How a helper program ended.
struct CommandResult {
    int exit_code = 0;  ///< 127 when the program could not be started, 128+N when killed by N
    std::string output; ///< stdout and stderr, interleaved
};

/// Runs `argv` (argv[0] looked up in PATH) with stdin from /dev/null and waits for it.
CommandResult run_command(const std::vector<std::string>& argv);

/// `argv` as one shell-like line for messages and --dry-run (arguments with spaces quoted).
std::string command_line(const std::vector<std::string>& argv);

} // namespace gua::ops
