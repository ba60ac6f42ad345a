// SPDX-License-Identifier: Apache-2.0
// `gua free`: which GPUs can be used now — truly idle now and for the last --for, not allocated,
// with enough free memory — from the running daemon's database, or from a short NVML sample.
#include "alloc/settings.hpp"
#include "cli/command.hpp"
#include "cli/live_flags.hpp"
#include "config/config.hpp"
#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "daemon/signals.hpp"
#include "live/free_source.hpp"
#include "policy/rule.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <memory>

namespace gua::cli {

namespace {

struct FreeCommandOptions {
    LiveFlags flags;
    std::string for_text = "10m";
    std::string min_memory;
    std::uint64_t count = 1;
    std::string format = "text";
};

live::FreeAsk ask_of(const FreeCommandOptions& o) {
    live::FreeAsk ask;
    ask.for_us = o.for_text == "0" ? 0 : duration_flag("--for", o.for_text);
    if (!o.min_memory.empty()) {
        const Result<std::int64_t> mib = policy::parse_memory_mib(o.min_memory);
        if (!mib) {
            throw Fatal("--min-memory: " + mib.error().message, ExitCode::usage);
        }
        ask.min_memory_mib = mib.value();
    }
    if (o.count == 0) {
        throw Fatal("--count: must be at least 1", ExitCode::usage);
    }
    ask.count = o.count;
    return ask;
}

/// Samples NVML (crossed with the configured allocation sources) when no daemon records.
live::FreeModel sample(const FreeCommandOptions& o, const live::LiveOptions& options,
                       const std::string& why, const live::FreeAsk& ask) {
    const Result<config::Config> cfg = config::load_effective_config(o.flags.config);
    std::unique_ptr<alloc::AllocationSource> allocations =
        cfg ? alloc::make_allocation_source(cfg.value().allocations) : nullptr;
    std::unique_ptr<telemetry::DeviceSource> source = open_live_source(o.flags, why);
    daemon::SignalFlags& signals = daemon::install_signal_handlers();
    SystemClock clock;
    sampler::SamplerOptions sampling =
        live::one_tick_options(options.thresholds, duration_flag("--sample", o.flags.sample));
    sampling.allocations = allocations.get();
    return live::free_from_sample(*source, sampling, options.thresholds, clock, signals.stop, why,
                                  ask);
}

std::string summary(const live::FreeModel& m) {
    std::string what = m.ask.for_us > 0 ? "truly idle for the last " + format_duration(m.ask.for_us)
                                        : "truly idle now";
    if (m.ask.min_memory_mib) {
        what += fmt::format(" with {} MiB free", *m.ask.min_memory_mib);
    }
    return fmt::format("{} of {} GPUs {}, {} needed{}", m.free_indices().size(), m.gpus.size(),
                       what, m.ask.count,
                       m.source == "sampled" ? " (" + m.note + "; sampled NVML)" : "");
}

int run(const FreeCommandOptions& o) {
    const live::FreeAsk ask = ask_of(o);
    const live::LiveOptions options = live_options(o.flags);
    duration_flag("--sample", o.flags.sample);
    LiveDatabase live_db = open_live_database(o.flags);
    store::Database* db = live_db.db.get();
    const TimeUs now = wall_now();
    const store::RecentState recent = db ? store::read_recent(*db) : store::RecentState{};
    const live::FreeModel model =
        db && live::daemon_is_recording(recent, now)
            ? live::free_from_database(*db, db->path(), recent, options.thresholds, ask)
            : sample(o, options, no_daemon_reason(live_db, recent, now), ask);
    const std::string out = o.format == "json"   ? live::render_free_json(model)
                            : o.format == "cuda" ? live::render_free_cuda(model)
                                                 : live::render_free_text(model);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    if (!model.enough()) {
        fmt::print(stderr, "gua: {}\n", summary(model));
        return 1;
    }
    return 0;
}

} // namespace

Runner register_free(CLI::App& app) {
    auto o = std::make_shared<FreeCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "free", "Which GPUs can be used now: truly idle now and for a while, not allocated");
    cmd->add_option("--db", o->flags.db,
                    "Database of the running daemon (default: the user's, else the system's)");
    cmd->add_option("--config", o->flags.config,
                    "Config file for the thresholds and allocation sources (default: "
                    "~/.config/gua/gua.toml or /etc/gua/gua.toml if present)");
    cmd->add_option("--nvml-library", o->flags.nvml_library,
                    "libnvidia-ml.so.1 to sample when no daemon is recording");
    cmd->add_option("--for", o->for_text,
                    "How long a card must have been truly idle, up to now (0: now only)")
        ->capture_default_str();
    cmd->add_option("--min-memory", o->min_memory, "Free memory a card needs, e.g. 40GiB");
    cmd->add_option("--count", o->count, "GPUs needed: exit 0 when at least this many are free")
        ->capture_default_str();
    cmd->add_option("--format", o->format,
                    "text: the free indices; cuda: CUDA_VISIBLE_DEVICES= with --count of them; "
                    "json: every card's verdict")
        ->check(CLI::IsMember({"text", "json", "cuda"}))
        ->capture_default_str();
    cmd->add_option("--sample", o->flags.sample,
                    "How long to sample NVML when no daemon is recording")
        ->capture_default_str();
    return [o] { return run(*o); };
}

} // namespace gua::cli
