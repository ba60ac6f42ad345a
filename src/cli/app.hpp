// SPDX-License-Identifier: Apache-2.0
// The command-line application: the explicit list of subcommands and the error → exit code policy.
#pragma once

namespace gua::cli {

/// Parses argv, runs the chosen subcommand and returns the process exit code. Catches gua::Fatal
/// (printed as one line on stderr) and every other exception; nothing escapes.
int main_entry(int argc, char** argv);

} // namespace gua::cli
