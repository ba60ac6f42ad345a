// SPDX-License-Identifier: Apache-2.0
// Shared set-up of `gua now` and `gua top`.
#include "cli/live_flags.hpp"

#include "config/config.hpp"
#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "nvml/open.hpp"
#include "store/paths.hpp"
#include "store/schema.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace gua::cli {

void add_live_flags(CLI::App& cmd, LiveFlags& flags) {
    cmd.add_option("--db", flags.db,
                   "Database of the running daemon (default: the user's, else the system's)");
    cmd.add_option("--config", flags.config,
                   "Config file for the thresholds (default: ~/.config/gua/gua.toml or "
                   "/etc/gua/gua.toml if present)");
    cmd.add_option("--nvml-library", flags.nvml_library,
                   "libnvidia-ml.so.1 to sample when no daemon is recording");
    cmd.add_option("--window", flags.window, "Window of the per-GPU state bar")
        ->capture_default_str();
    cmd.add_option("--history", flags.history,
                   "Window of the per-GPU history line (gua top) and of recent_states (JSON), "
                   "10s to 24h")
        ->capture_default_str();
    cmd.add_option("--color", flags.color,
                   "ANSI colours: auto (on a terminal, unless NO_COLOR is set), always or never")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->capture_default_str();
}

DurationUs duration_flag(const std::string& flag, const std::string& text) {
    const Result<DurationUs> d = parse_duration(text);
    if (!d) {
        throw Fatal(fmt::format("{}: {}", flag, d.error().message), ExitCode::usage);
    }
    return d.value();
}

live::LiveOptions live_options(const LiveFlags& flags) {
    const Result<config::Config> cfg = config::load_effective_config(flags.config);
    if (!cfg) {
        throw Fatal(cfg.error().message, ExitCode::usage);
    }
    live::LiveOptions o;
    o.thresholds = cfg.value().thresholds;
    o.recent_window_us = duration_flag("--window", flags.window);
    o.history_us = duration_flag("--history", flags.history);
    if (o.history_us < 10 * k_us_per_second || o.history_us > k_us_per_day) {
        throw Fatal(fmt::format("--history: must be between 10s and 24h, not {}", flags.history),
                    ExitCode::usage);
    }
    return o;
}

LiveDatabase open_live_database(const LiveFlags& flags) {
    LiveDatabase out;
    out.path = !flags.db.empty() ? flags.db : store::default_read_path().value_or("");
    std::error_code ec;
    if (out.path.empty() || !std::filesystem::exists(out.path, ec)) {
        return out;
    }
    auto db = std::make_unique<store::Database>(out.path, store::OpenMode::read_only);
    if (db->scalar("PRAGMA user_version") == 0 &&
        db->scalar("SELECT count(*) FROM sqlite_schema") == 0) {
        return out;
    }
    store::check_readable(*db);
    out.db = std::move(db);
    return out;
}

std::string no_daemon_reason(const LiveDatabase& db, const store::RecentState& recent, TimeUs now) {
    if (db.db) {
        return live::no_daemon_reason(recent, now);
    }
    return db.path.empty() ? "no daemon is recording (no database found)"
                           : "no daemon is recording (no data in " + db.path + ")";
}

std::unique_ptr<telemetry::DeviceSource> open_live_source(const LiveFlags& flags,
                                                          const std::string& why) {
    Result<std::unique_ptr<telemetry::DeviceSource>> source =
        nvml::open_nvml_source(flags.nvml_library);
    if (!source) {
        throw Fatal(fmt::format("{}, and NVML cannot be sampled: {}", why, source.error().message),
                    ExitCode::no_driver);
    }
    return std::move(source).value();
}

bool stdout_color(const std::string& mode) {
    if (mode != "auto") {
        return mode == "always";
    }
    const char* no_color = std::getenv("NO_COLOR");
    return isatty(STDOUT_FILENO) == 1 && (no_color == nullptr || *no_color == 0);
}

} // namespace gua::cli
