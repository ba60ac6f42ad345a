// SPDX-License-Identifier: Apache-2.0
// What `gua start` does: install and enable gua.service where systemd runs the system,
// otherwise start the daemon in the background; nothing that is already done is done again.
#pragma once

#include "core/time.hpp"
#include "ops/background.hpp"
#include "ops/installation.hpp"
#include "ops/plan.hpp"

#include <memory>
#include <string>
#include <vector>

namespace gua::ops {

/// Settings of one `gua start`.
struct StartOptions {
    std::string exe;      ///< the gua binary the service or background daemon runs
    std::string interval; ///< --interval for a background daemon; empty: config or default
    DurationUs ready_timeout = 30 * k_us_per_second;
};

/// The mode chosen, why, and the steps.
struct StartPlan {
    RunMode mode = RunMode::background; ///< service or background
    std::string why;                    ///< one line: why this mode
    bool already_running = false;       ///< a daemon records to the database already
    std::vector<Step> steps;
    std::shared_ptr<LaunchResult> launch; ///< set by the background launch step when it ran
};

/// Plans `gua start` for `paths` recording to `db`. Throws Fatal(usage) for --interval with the
/// service (its interval lives in the config file).
StartPlan plan_start(const Paths& paths, const std::string& db, const Installation& installed,
                     const Systemctl& systemctl, const StartOptions& options);

/// The background daemon's command line.
std::vector<std::string> daemon_command(const Paths& paths, const std::string& db,
                                        const StartOptions& options);

/// packaging/gua.service with ExecStart pointing at `exe`.
std::string unit_text_for(const std::string& exe);

} // namespace gua::ops
