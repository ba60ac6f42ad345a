// SPDX-License-Identifier: Apache-2.0
// What every subcommand file provides: a registration function that returns a runner.
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace gua::cli {

/// Runs a parsed subcommand and returns its exit code; throws gua::Fatal for user errors.
using Runner = std::function<int()>;

/// Registers `gua report` on `app`; the returned runner reads the parsed options.
Runner register_report(CLI::App& app);
/// Registers `gua demo`.
Runner register_demo(CLI::App& app);
/// Registers `gua daemon`.
Runner register_daemon(CLI::App& app);
/// Registers `gua doctor`.
Runner register_doctor(CLI::App& app);
/// Registers `gua start`.
Runner register_start(CLI::App& app);
/// Registers `gua status`.
Runner register_status(CLI::App& app);
/// Registers `gua stop`.
Runner register_stop(CLI::App& app);
/// Registers `gua uninstall`.
Runner register_uninstall(CLI::App& app);
/// Registers `gua now`.
Runner register_now(CLI::App& app);
/// Registers `gua top`.
Runner register_top(CLI::App& app);
/// Registers `gua free`.
Runner register_free(CLI::App& app);
/// Registers `gua db` (stats, check, vacuum, backup).
Runner register_db(CLI::App& app);
/// Registers `gua job` (one Slurm job or pod from the database).
Runner register_job(CLI::App& app);
/// Registers `gua plan` (what-if replay of the recorded work under a policy).
Runner register_plan(CLI::App& app);
/// Registers `gua digest` (the window's figures per user, team and for the admin).
Runner register_digest(CLI::App& app);
/// Registers `gua import`.
Runner register_import(CLI::App& app);
/// Registers `gua version` (version, git commit, SQLite and driver versions).
Runner register_version(CLI::App& app);
/// Registers the hidden `gua completion bash|zsh|fish`, which describes every visible command of
/// `app` when it runs.
Runner register_completion(CLI::App& app);

} // namespace gua::cli
