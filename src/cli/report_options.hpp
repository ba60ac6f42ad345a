// Options shared by commands that print a report (`gua report`, `gua demo`).
#pragma once

#include "config/config.hpp"
#include "report/build.hpp"
#include "report/model.hpp"

#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace gua::cli {

/// Presentation flags: --format, --width, --tz, --top; and --config, --price.
struct ReportFlags {
    std::string format = "text"; ///< text | json | csv
    std::string table;           ///< --table with --format csv: gpus | identities | heatmap | cost
    int width = 60;              ///< headline bar width (gpu-usage-audit's --width)
    std::string tz = "UTC";      ///< heatmap time zone: UTC, local or an IANA name
    std::size_t top = 10;        ///< identities shown in §4
    std::string config;          ///< gua.toml to use (default: the usual locations)
    std::string price;           ///< --price: one price per GPU-hour for every GPU, e.g. "3.50"
};

/// Adds the presentation flags to `cmd`.
void add_report_flags(CLI::App& cmd, ReportFlags& flags);

/// Throws Fatal (usage) when --format csv has no --table, or --table comes without it.
void check_format(const ReportFlags& flags);

/// Loads the effective gua.toml (--config, else $XDG_CONFIG_HOME/gua/gua.toml or
/// /etc/gua/gua.toml, else defaults) and applies its thresholds, prices and grouping, then
/// --price, to `options`. Returns the config. Throws Fatal (usage) for a bad file or --price.
config::Config apply_config(const ReportFlags& flags, report::BuildOptions& options);
/// Prints a finished report on stdout in the chosen format. Returns the exit code.
int print_model(const report::ReportModel& model, const ReportFlags& flags);

/// Builds and prints the report for `options` from the database at `db_path` on stdout.
/// Returns the exit code.
int print_report(const std::string& db_path, report::BuildOptions options,
                 const ReportFlags& flags);

} // namespace gua::cli
