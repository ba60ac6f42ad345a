// SPDX-License-Identifier: Apache-2.0
// `gua import --from gpu-usage-audit OLD.db [--db gua.db] [--interval 30s]`.
#include "store/import.hpp"

#include "cli/command.hpp"
#include "config/config.hpp"
#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "store/file_kind.hpp"
#include "store/paths.hpp"
#include "store/prior_art.hpp"
#include "store/run_kinds.hpp"
#include "store/schema.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <unistd.h>

namespace gua::cli {

namespace {

/// Files with more samples than this get a progress bar (on a terminal).
constexpr std::uint64_t k_progress_threshold = 50000;

struct ImportOptions {
    std::string from;
    std::string source;
    std::string db;
    std::string config;
    std::string interval;
};

void draw_progress(std::uint64_t done, std::uint64_t total) {
    constexpr int k_width = 40;
    const double share = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1;
    const int filled = static_cast<int>(share * k_width);
    fmt::print(stderr, "\rimporting [{}{}] {:3.0f}% ({}/{} samples)", std::string(filled, '#'),
               std::string(k_width - filled, ' '), share * 100, done, total);
    std::fflush(stderr);
}

int run(const ImportOptions& o) {
    if (o.from != "gpu-usage-audit") {
        throw Fatal(fmt::format("--from {}: unknown format (supported: gpu-usage-audit)", o.from),
                    ExitCode::usage);
    }
    store::ImportOptions options;
    // Imported samples are classified, and rollups built, with the configured thresholds.
    const Result<config::Config> cfg = config::load_effective_config(o.config);
    if (!cfg) {
        throw Fatal(cfg.error().message, ExitCode::usage);
    }
    options.thresholds = cfg.value().thresholds;
    if (!o.interval.empty()) {
        const Result<DurationUs> d = parse_duration(o.interval);
        if (!d) {
            throw Fatal("--interval: " + d.error().message, ExitCode::usage);
        }
        options.interval = d.value();
    }
    const bool tty = isatty(STDERR_FILENO) == 1;
    bool drew = false;
    options.progress = [&](std::uint64_t done, std::uint64_t total) {
        if (tty && total > k_progress_threshold) {
            draw_progress(done, total);
            drew = true;
        }
    };
    const std::string db_path = o.db.empty() ? store::default_write_path() : o.db;
    // Everything that can be checked is checked before the target is created: a rejected import
    // leaves no file behind.
    std::error_code ec;
    if (!std::filesystem::is_regular_file(o.source, ec)) {
        throw Fatal(fmt::format("{}: no such file", o.source), ExitCode::usage);
    }
    { const store::PriorArtFile source(o.source); } // throws for a file of another kind
    const store::FileProbe target = store::probe_file(db_path);
    if (target.kind == store::FileKind::foreign) {
        throw Fatal(target.message, ExitCode::usage);
    }
    store::refuse_demo_data(db_path);
    store::ImportSummary s;
    try {
        store::Database db(db_path, store::OpenMode::create);
        store::migrate(db);
        s = store::import_gpu_usage_audit(o.source, db, options);
    } catch (...) {
        if (target.kind == store::FileKind::missing) { // ours, holding nothing but this import
            for (const char* suffix : {"", "-wal", "-shm"}) {
                std::filesystem::remove(db_path + suffix, ec);
            }
        }
        throw;
    }
    if (drew) {
        fmt::print(stderr, "\n");
    }
    const std::string span =
        s.first ? fmt::format(", {} → {}", format_iso8601(*s.first), format_iso8601(*s.last_end))
                : "";
    fmt::print("imported {} card-ticks and {} process samples of {} GPUs{} from {} "
               "(gpu-usage-audit {} schema; {} card-ticks with a recorded interval) into {}; "
               "{} already present\n",
               s.card_ticks, s.process_rows, s.gpus, span, o.source, s.schema_version,
               s.recorded_interval_ticks, db_path, s.skipped);
    return 0;
}

} // namespace

Runner register_import(CLI::App& app) {
    auto o = std::make_shared<ImportOptions>();
    CLI::App* cmd = app.add_subcommand(
        "import", "Import another tool's database (idempotent: twice adds nothing)");
    cmd->add_option("--from", o->from, "Format of the file: gpu-usage-audit")->required();
    cmd->add_option("FILE", o->source, "The database to import")->required();
    cmd->add_option("--db", o->db,
                    "gua database to import into (default: the one the daemon writes)");
    cmd->add_option("--config", o->config,
                    "gua.toml whose thresholds classify the imported samples and their rollups");
    cmd->add_option("--interval", o->interval,
                    "Tick length of every imported sample (default: recorded per run, else "
                    "inferred per GPU from the sample spacing)");
    return [o] { return run(*o); };
}

} // namespace gua::cli
