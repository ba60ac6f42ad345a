// SPDX-License-Identifier: Apache-2.0
// Shared report printing: time zone, renderer choice, colour policy.
#include "cli/report_options.hpp"

#include "cli/live_flags.hpp"
#include "cli/output_file.hpp"
#include "cli/validators.hpp"
#include "core/fatal.hpp"
#include "report/render.hpp"
#include "store/database.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace gua::cli {

void add_report_flags(CLI::App& cmd, ReportFlags& flags) {
    cmd.add_option("--color", flags.color,
                   "ANSI colours in text: auto (on a terminal, unless NO_COLOR is set), always or "
                   "never")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->capture_default_str();
    cmd.add_option("--format", flags.format, "Output format")
        ->check(CLI::IsMember({"text", "json", "csv", "html"}))
        ->capture_default_str();
    cmd.add_option("--output", flags.output,
                   "Write the report to this file instead of stdout (- is stdout; only a regular "
                   "file is replaced, never a database or special file)")
        ->check(non_empty());
    cmd.add_option("--table", flags.table,
                   "With --format csv: the table to write (gpus, identities, heatmap, cost)")
        ->check(CLI::IsMember({"gpus", "identities", "heatmap", "cost"}));
    cmd.add_option("--width", flags.width, "Width of the headline bar in cells")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    cmd.add_option("--tz", flags.tz,
                   "Time zone of the heatmap and office hours: UTC, local, or e.g. Europe/Berlin "
                   "(default: [report] time_zone of gua.toml, else UTC)")
        ->check(non_empty());
    cmd.add_option("--top", flags.top, "Number of identities listed in §4")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    cmd.add_option("--config", flags.config,
                   "Config file (default: ~/.config/gua/gua.toml or /etc/gua/gua.toml if present)")
        ->check(non_empty());
    cmd.add_option("--price", flags.price,
                   "Price per GPU-hour for every GPU in this report, e.g. 3.50 (overrides "
                   "[pricing])")
        ->check(price_per_gpu_hour());
}

config::Config apply_config(const ReportFlags& flags, report::BuildOptions& options) {
    Result<config::Config> cfg = config::load_effective_config(flags.config);
    if (!cfg) {
        throw Fatal(cfg.error().message, ExitCode::usage);
    }
    options.thresholds = cfg.value().thresholds;
    options.pricing = cfg.value().pricing;
    options.energy = cfg.value().energy;
    options.health = cfg.value().health;
    options.grouping = cfg.value().grouping;
    options.time_zone = flags.tz.empty() ? cfg.value().time_zone : flags.tz;
    if (!flags.price.empty()) {
        char* end = nullptr;
        const double v = std::strtod(flags.price.c_str(), &end);
        const std::optional<std::int64_t> micros =
            end != nullptr && *end == '\0' && std::isfinite(v) ? audit::to_micros(v) : std::nullopt;
        if (!micros) {
            throw Fatal(fmt::format("--price {}: expected a price per GPU-hour from 0 to 1000, "
                                    "e.g. 3.50",
                                    flags.price),
                        ExitCode::usage);
        }
        options.pricing.override_micros_per_gpu_hour = *micros;
    }
    return cfg.value();
}

TimeZone report_zone(const report::BuildOptions& options) {
    const Result<TimeZone> tz = TimeZone::load(options.time_zone);
    if (!tz) {
        throw Fatal("--tz: " + tz.error().message, ExitCode::usage);
    }
    return tz.value();
}

int print_report(const std::string& db_path, report::BuildOptions options,
                 const ReportFlags& flags) {
    const TimeZone tz = report_zone(options);
    options.top_identities = flags.top;
    store::Database db(db_path, store::OpenMode::read_only);
    return print_model(report::build_report(db, options, tz), flags);
}

void check_format(const ReportFlags& flags) {
    if (flags.format == "csv" && flags.table.empty()) {
        throw Fatal("--format csv needs --table gpus, identities, heatmap or cost",
                    ExitCode::usage);
    }
    if (flags.format != "csv" && !flags.table.empty()) {
        throw Fatal("--table " + flags.table + " needs --format csv", ExitCode::usage);
    }
}

int print_model(const report::ReportModel& model, const ReportFlags& flags) {
    check_format(flags);
    std::string out;
    if (flags.format == "csv") {
        const report::CsvTable table = flags.table == "gpus"         ? report::CsvTable::gpus
                                       : flags.table == "identities" ? report::CsvTable::identities
                                       : flags.table == "heatmap"    ? report::CsvTable::heatmap
                                                                     : report::CsvTable::cost;
        out = report::render_csv(model, table);
    } else if (flags.format == "json") {
        out = report::render_json(model);
    } else if (flags.format == "html") {
        out = report::render_html(model);
    } else {
        // auto: a terminal only, never with NO_COLOR; a file gets colours only when asked for.
        const bool to_stdout = flags.output.empty() || flags.output == "-";
        const bool color = to_stdout ? stdout_color(flags.color) : flags.color == "always";
        out = report::render_text(model, report::TextOptions{flags.width, color});
    }
    if (!flags.output.empty()) {
        write_user_file("--output", flags.output, out);
        return 0;
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    return 0;
}

} // namespace gua::cli
