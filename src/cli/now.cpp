// SPDX-License-Identifier: Apache-2.0
// `gua now`: who holds each GPU right now and for how long it has been idle-held — from the
// running daemon's database, or by sampling NVML for a few seconds when no daemon records.
#include "cli/command.hpp"
#include "cli/live_flags.hpp"
#include "cli/now_fleet.hpp"
#include "core/fatal.hpp"
#include "daemon/signals.hpp"
#include "live/build.hpp"
#include "live/command_line.hpp"
#include "live/render.hpp"
#include "live/terminal.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <unistd.h>

namespace gua::cli {

namespace {

struct NowCommandOptions {
    LiveFlags flags;
    FleetNowFlags fleet;
    std::string format = "text";
};

int run(const NowCommandOptions& o) {
    if (!o.fleet.url.empty()) {
        return print_fleet_now(o.fleet, o.flags, o.format);
    }
    const live::LiveOptions options = live_options(o.flags);
    const DurationUs sample_us = duration_flag("--sample", o.flags.sample);
    LiveDatabase live_db = open_live_database(o.flags);
    store::Database* db = live_db.db.get();
    const TimeUs now = wall_now();
    const store::RecentState recent = db ? store::read_recent(*db) : store::RecentState{};
    live::NowModel model;
    if (db && live::daemon_is_recording(recent, now)) {
        model = live::now_from_database(*db, db->path(), recent, options, now);
    } else {
        const std::string why = no_daemon_reason(live_db, recent, now);
        std::unique_ptr<telemetry::DeviceSource> source = open_live_source(o.flags, why);
        live::LiveSampler sampler(*source, options);
        if (db) {
            sampler.seed(*db, db->path(), now);
        }
        daemon::SignalFlags& signals = daemon::install_signal_handlers();
        SystemClock clock;
        model = sampler.sample(sample_us, clock, signals.stop, why);
    }
    live::fill_command_lines(model);
    live::slice_history(model, live::k_json_history_slices);
    const std::string out =
        o.format == "json"
            ? live::render_now_json(model)
            : live::render_now_text(model, {stdout_color(o.flags.color), 20, 8,
                                            live::terminal_columns(STDOUT_FILENO), false});
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    return 0;
}

} // namespace

Runner register_now(CLI::App& app) {
    auto o = std::make_shared<NowCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "now", "Who holds each GPU right now, and how long it has been idle-held");
    add_live_flags(*cmd, o->flags);
    cmd->add_option("--sample", o->flags.sample,
                    "How long to sample NVML when no daemon is recording")
        ->capture_default_str();
    add_fleet_now_flags(*cmd, o->fleet);
    cmd->get_option("--prometheus")->excludes("--sample");
    cmd->add_option("--format", o->format, "Output format")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    return [o] { return run(*o); };
}

} // namespace gua::cli
