// Options shared by commands that print a report (`gua report`, `gua demo`).
#pragma once

#include "report/build.hpp"
#include "report/model.hpp"

#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace gua::cli {

/// Presentation flags: --format, --width, --tz, --top.
struct ReportFlags {
    std::string format = "text"; ///< text | json
    int width = 60;              ///< headline bar width (prior art's --width)
    std::string tz = "UTC";      ///< heatmap time zone: UTC, local or an IANA name
    std::size_t top = 10;        ///< identities shown in §4
};

/// Adds the presentation flags to `cmd`.
void add_report_flags(CLI::App& cmd, ReportFlags& flags);

/// Prints a finished report on stdout in the chosen format. Returns the exit code.
int print_model(const report::ReportModel& model, const ReportFlags& flags);

/// Builds and prints the report for `options` from the database at `db_path` on stdout.
/// Returns the exit code.
int print_report(const std::string& db_path, report::BuildOptions options,
                 const ReportFlags& flags);

} // namespace gua::cli
