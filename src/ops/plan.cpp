// SPDX-License-Identifier: Apache-2.0
// Printing and running plans.
#include "ops/plan.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace gua::ops {

void print_plan(const std::vector<Step>& steps) {
    for (const Step& step : steps) {
        fmt::print("  - {}\n", step.text);
    }
    std::fflush(stdout);
}

Result<void> run_plan(const std::vector<Step>& steps) {
    for (const Step& step : steps) {
        if (step.skipped) {
            fmt::print("  – {}\n", step.text);
            continue;
        }
        const Result<std::string> done = step.action();
        if (!done) {
            fmt::print("  ✗ {}: {}\n", step.text, done.error().message);
            std::fflush(stdout);
            return done.error();
        }
        const std::string& detail = done.value();
        fmt::print("  ✓ {}{}\n", step.text, detail.empty() ? "" : " — " + detail);
        std::fflush(stdout);
    }
    return {};
}

} // namespace gua::ops
