// SPDX-License-Identifier: Apache-2.0
// Options shared by commands that print a report (`gua report`, `gua demo`).
#pragma once

#include "config/config.hpp"
#include "core/timezone.hpp"
#include "report/build.hpp"
#include "report/model.hpp"

#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace gua::cli {

/// Presentation flags: --format, --output, --width, --tz, --top; and --config, --price.
struct ReportFlags {
    std::string format = "text"; ///< text | json | csv | html
    std::string output;          ///< --output FILE; empty: stdout
    std::string table;           ///< --table with --format csv: gpus | identities | heatmap | cost
    int width = 60;              ///< headline bar width (gpu-usage-audit's --width)
    std::string tz;              ///< --tz: UTC, local or an IANA name; empty: [report] time_zone
    std::size_t top = 10;        ///< identities shown in §4
    std::string config;          ///< gua.toml to use (default: the usual locations)
    std::string price;           ///< --price: one price per GPU-hour for every GPU, e.g. "3.50"
    std::string color = "auto";  ///< --color: auto, always or never (text format)
};

/// Adds the presentation flags to `cmd`.
void add_report_flags(CLI::App& cmd, ReportFlags& flags);

/// Throws Fatal (usage) when --format csv has no --table, or --table comes without it.
void check_format(const ReportFlags& flags);

/// Loads the effective gua.toml (--config, else $XDG_CONFIG_HOME/gua/gua.toml or
/// /etc/gua/gua.toml, else defaults) and applies its thresholds, prices, grouping and time zone,
/// then --price and --tz, to `options`. Returns the config. Throws Fatal (usage) for a bad file
/// or --price.
config::Config apply_config(const ReportFlags& flags, report::BuildOptions& options);
/// The zone of `options.time_zone`; throws Fatal (usage, naming --tz) for an unknown zone.
TimeZone report_zone(const report::BuildOptions& options);
/// Writes a finished report in the chosen format to --output (write_user_file: a regular file
/// replaced through a temporary file beside it, - for stdout) or stdout. Returns the exit code;
/// throws Fatal when the file is refused or cannot be written.
int print_model(const report::ReportModel& model, const ReportFlags& flags);

/// Builds and prints the report for `options` from the database at `db_path` (print_model).
/// Returns the exit code.
int print_report(const std::string& db_path, report::BuildOptions options,
                 const ReportFlags& flags);

} // namespace gua::cli
