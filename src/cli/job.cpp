// SPDX-License-Identifier: Apache-2.0
// `gua job ID`: one Slurm job or pod from the database, like `jobstats ID`; `--epilog` for a
// Slurm epilog or MailProg wrapper (never fails the job).
#include "cli/command.hpp"
#include "cli/validators.hpp"
#include "config/config.hpp"
#include "core/fatal.hpp"
#include "core/printable.hpp"
#include "report/job_report.hpp"
#include "store/database.hpp"
#include "store/paths.hpp"
#include "store/schema.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdlib>

namespace gua::cli {

namespace {

struct JobCommandOptions {
    std::string id;
    std::string db;
    std::string format = "text";
    std::string config;
    bool epilog = false;
};

std::string database_path(const JobCommandOptions& o) {
    if (!o.db.empty()) {
        return o.db;
    }
    if (const std::optional<std::string> found = store::default_read_path()) {
        return *found;
    }
    throw Fatal(fmt::format("no database found at {} or {} (pass --db PATH)", store::user_db_path(),
                            store::k_system_db_path));
}

int report(const JobCommandOptions& o) {
    if (o.id.empty()) {
        throw Fatal("gua job: no job id given (and SLURM_JOB_ID is not set)", ExitCode::usage);
    }
    Result<config::Config> cfg = config::load_effective_config(o.config);
    if (!cfg) {
        throw Fatal(cfg.error().message, ExitCode::usage);
    }
    store::Database db(database_path(o), store::OpenMode::read_only);
    store::check_readable(db);
    Result<report::JobReport> job =
        report::build_job_report(db, o.id, cfg.value().pricing, cfg.value().thresholds);
    if (!job) {
        throw Fatal(job.error().message);
    }
    if (o.format == "json") {
        fmt::print("{}\n", report::job_json(job.value()).dump(2));
    } else {
        fmt::print("{}", terminal_text(report::job_text(job.value()), false));
    }
    return 0;
}

/// --epilog: the job id from SLURM_JOB_ID when not given; every failure is one line on stderr
/// and exit 0, because a failing Slurm epilog drains the node.
int epilog(JobCommandOptions o) {
    if (o.id.empty()) {
        const char* env = std::getenv("SLURM_JOB_ID");
        o.id = env != nullptr ? env : "";
    }
    try {
        return report(o);
    } catch (const std::exception& e) {
        fmt::print(stderr, "gua job --epilog: {}\n", e.what());
        return 0;
    }
}

} // namespace

Runner register_job(CLI::App& app) {
    auto o = std::make_shared<JobCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "job", "One Slurm job or pod: its GPUs and how each was used (active, idle-held, "
               "allocated-unused), peak memory, energy, cost and notes");
    cmd->add_option("id", o->id, "Slurm job id, <namespace>/<pod>, or a reservation's name");
    cmd->add_option("--db", o->db, "Database to read (default: the user's, else the system's)")
        ->check(non_empty());
    cmd->add_option("--format", o->format, "text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    cmd->add_option("--config", o->config, "Config file (prices)")->check(non_empty());
    cmd->add_flag("--epilog", o->epilog,
                  "For a Slurm epilog or MailProg wrapper: the id defaults to $SLURM_JOB_ID, and "
                  "errors are printed but never fail (exit 0)");
    return [o] { return o->epilog ? epilog(*o) : report(*o); };
}

} // namespace gua::cli
