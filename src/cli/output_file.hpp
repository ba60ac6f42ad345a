// SPDX-License-Identifier: Apache-2.0
// Writing a file the user names on the command line (--output) without ever destroying what is
// at the path: only regular files are replaced, SQLite's files and special files are refused.
#pragma once

#include <string>
#include <string_view>

namespace gua::cli {

/// Writes `text` to `path`, named by `flag` (e.g. "--output") in every message:
/// - "-", or any path that names this process's standard output (/dev/stdout, /proc/self/fd/1,
///   the pipe or terminal it is): written to standard output directly;
/// - a missing path: a new regular file, mode 0666 minus the umask (as `> FILE` in a shell);
/// - an existing regular file the caller may write: replaced whole through a new temporary file
///   beside it (O_EXCL, renamed over it), keeping its mode, and its owner when run as root.
/// Refuses, with Fatal (usage) and one line, SQLite's files (store::sqlite_owned), directories,
/// symlinks, FIFOs, sockets and device nodes. Throws Fatal (failure) when writing fails; a failed
/// write leaves the path as it was.
void write_user_file(std::string_view flag, const std::string& path, std::string_view text);

} // namespace gua::cli
