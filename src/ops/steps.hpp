// SPDX-License-Identifier: Apache-2.0
// The kinds of steps plans are made of: files written and removed, directories created,
// helper programs run, systemctl verbs.
#pragma once

#include "ops/plan.hpp"
#include "ops/systemctl.hpp"

#include <string>
#include <sys/types.h>
#include <vector>

namespace gua::ops {

/// Creates `dir` and its parents with `mode` for the last one.
Step make_directory(const std::string& dir, mode_t mode);

/// Writes `content` to `path` (atomically, creating parents) with `mode`; `what` says what the
/// file is, e.g. "default configuration".
Step write_file(const std::string& path, const std::string& content, mode_t mode,
                const std::string& what);

/// Removes the file `path` (a missing file is not an error).
Step remove_file(const std::string& path, const std::string& what);

/// Removes `dir` if it is empty (a non-empty or missing directory is left alone).
Step remove_empty_directory(const std::string& dir);

/// Runs `argv`; a non-zero exit is an error carrying the program's last output line.
Step run_program(const std::vector<std::string>& argv);

/// Runs `systemctl verb gua.service`; when systemctl.can_run(verb) is false the step is shown
/// as skipped, with the reason, and does nothing.
Step systemctl_step(const Systemctl& systemctl, const std::string& verb);

} // namespace gua::ops
