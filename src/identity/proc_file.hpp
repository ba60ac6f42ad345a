// SPDX-License-Identifier: Apache-2.0
// Reading small /proc files with plain POSIX calls (no streams, one buffer, bounded size).
#pragma once

#include "core/result.hpp"

#include <cstddef>
#include <string>

namespace gua::identity {

/// Reads at most `max_bytes` of the file at `path`; the error names the path and errno text
/// (ENOENT/ESRCH for a process that has gone).
Result<std::string> read_proc_file(const std::string& path, std::size_t max_bytes);

} // namespace gua::identity
