// SPDX-License-Identifier: Apache-2.0
// A plan: the ordered steps of `gua start`, `gua stop` or `gua uninstall`. --dry-run prints the
// same steps the real run executes, so the two can never disagree.
#pragma once

#include "core/result.hpp"

#include <functional>
#include <string>
#include <vector>

namespace gua::ops {

/// One action: what it does, in words, and doing it.
struct Step {
    std::string text; ///< e.g. "write /etc/gua/gua.toml (default configuration)"
    /// Performs the step; the value is an optional detail shown after the text (e.g. a pid).
    std::function<Result<std::string>()> action;
    bool skipped = false; ///< shown, but deliberately not done (the text says why)
};

/// Prints every step as "  - text" without running anything (a dry run).
void print_plan(const std::vector<Step>& steps);

/// Runs the steps in order, printing "  ✓ text" ("  – text" when skipped, "  ✗ text: error"
/// on failure), and stops at the first failure. Returns the failed step's error, if any.
Result<void> run_plan(const std::vector<Step>& steps);

} // namespace gua::ops
