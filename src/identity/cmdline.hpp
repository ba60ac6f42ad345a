// SPDX-License-Identifier: Apache-2.0
// Pure parsers for /proc/<pid>/cmdline: argv splitting, display and the Jupyter kernel id.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gua::identity {

/// Splits NUL-separated /proc/<pid>/cmdline bytes into arguments (one trailing NUL is optional;
/// empty arguments in the middle are kept).
std::vector<std::string> split_cmdline(std::string_view raw);

/// A command line for display: argv[0] without its directory, then the arguments, separated by
/// spaces; an argument with a space, a tab, a quote or nothing in it is quoted (single quotes, or
/// double quotes with \" inside when it holds a single quote), and terminal controls are escaped
/// (core/printable). Empty for an empty argv.
std::string display_cmdline(const std::vector<std::string>& argv);

/// The Jupyter kernel id, from a connection file argument named "kernel-<id>.json" (as a positional
/// argument, after -f/--f, or as "--opt=<path>"), when another argument marks a kernel launcher
/// (ipykernel, ipykernel_launcher, jupyter*, IRkernel, IJulia, xpython); else empty.
std::string jupyter_kernel_id(const std::vector<std::string>& argv);

} // namespace gua::identity
