// Shared report printing: time zone, renderer choice, colour policy.
#include "cli/report_options.hpp"

#include "core/fatal.hpp"
#include "report/render.hpp"
#include "store/database.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace gua::cli {

void add_report_flags(CLI::App& cmd, ReportFlags& flags) {
    cmd.add_option("--format", flags.format, "Output format")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    cmd.add_option("--width", flags.width, "Width of the headline bar in cells")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    cmd.add_option("--tz", flags.tz, "Time zone of the heatmap: UTC, local, or e.g. Europe/Berlin")
        ->capture_default_str();
    cmd.add_option("--top", flags.top, "Number of identities listed in §4")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
}

int print_report(const std::string& db_path, report::BuildOptions options,
                 const ReportFlags& flags) {
    const Result<TimeZone> tz = TimeZone::load(flags.tz);
    if (!tz) {
        throw Fatal("--tz: " + tz.error().message, ExitCode::usage);
    }
    options.top_identities = flags.top;
    store::Database db(db_path, store::OpenMode::read_only);
    return print_model(report::build_report(db, options, tz.value()), flags);
}

int print_model(const report::ReportModel& model, const ReportFlags& flags) {
    std::string out;
    if (flags.format == "json") {
        out = report::render_json(model);
    } else {
        const char* no_color = std::getenv("NO_COLOR");
        const bool color = isatty(STDOUT_FILENO) == 1 && (no_color == nullptr || *no_color == 0);
        out = report::render_text(model, report::TextOptions{flags.width, color});
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    return 0;
}

} // namespace gua::cli
