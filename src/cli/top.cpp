// SPDX-License-Identifier: Apache-2.0
// `gua top`: the `gua now` view refreshed in place on a terminal, with each holder's host CPU %
// and RSS, keys to sort, filter and tree the holders and to signal one (confirmed first, never
// with --readonly), a history line per GPU and a redraw on every key and resize; plain frames
// separated by blank lines when stdout is not a terminal.
#include "cli/command.hpp"
#include "cli/live_flags.hpp"
#include "cli/now_fleet.hpp"
#include "core/fatal.hpp"
#include "daemon/signals.hpp"
#include "live/command_line.hpp"
#include "live/top_screen.hpp"

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <unistd.h>

namespace gua::cli {

namespace {

struct TopCommandOptions {
    LiveFlags flags;
    FleetNowFlags fleet;
    std::string interval = "2s";
    std::optional<std::uint64_t> count;
    bool readonly = false;
};

int run(const TopCommandOptions& o) {
    const live::LiveOptions options = live_options(o.flags);
    const DurationUs refresh_us = duration_flag("--interval", o.interval);
    if (refresh_us < 100 * k_us_per_ms) {
        throw Fatal("--interval: must be at least 100ms", ExitCode::usage);
    }
    if (!o.fleet.url.empty()) {
        return run_fleet_top(o.fleet, o.flags, refresh_us, o.count);
    }
    LiveDatabase live_db = open_live_database(o.flags);
    store::Database* db = live_db.db.get();
    const store::RecentState recent = db ? store::read_recent(*db) : store::RecentState{};
    const bool from_db = db && live::daemon_is_recording(recent, wall_now());
    const std::string why = no_daemon_reason(live_db, recent, wall_now());
    std::unique_ptr<telemetry::DeviceSource> source;
    std::optional<live::LiveSampler> sampler;
    if (!from_db) {
        source = open_live_source(o.flags, why);
        sampler.emplace(*source, options);
        if (db) {
            sampler->seed(*db, db->path(), wall_now());
        }
    }
    daemon::SignalFlags& signals = daemon::install_signal_handlers();
    const bool tty = isatty(STDOUT_FILENO) == 1;
    live::TopScreenOptions screen_options;
    screen_options.key_fd = tty && isatty(STDIN_FILENO) == 1 ? STDIN_FILENO : -1;
    screen_options.out_fd = STDOUT_FILENO;
    screen_options.tty = tty;
    screen_options.text.color = stdout_color(o.flags.color);
    screen_options.refresh_us = refresh_us;
    screen_options.readonly = o.readonly;
    live::TopScreen screen(screen_options);
    screen.placeholder(from_db ? "gua top — reading the daemon's database…\n"
                               : "gua top — " + why + "; sampling NVML…\n");
    live::ScreenClock clock(screen, signals.stop);
    for (std::uint64_t frame = 0; !signals.stop.load() && (!o.count || frame < *o.count); ++frame) {
        live::NowModel model =
            from_db ? live::now_from_database(*db, db->path(), store::read_recent(*db), options,
                                              wall_now())
                    : sampler->sample(refresh_us, clock, signals.stop, why);
        if (signals.stop.load()) {
            break;
        }
        live::fill_command_lines(model);
        screen.show(std::move(model));
        const bool last = o.count && frame + 1 == *o.count;
        if (from_db && !last && screen.wait_until(clock.mono_now() + refresh_us, signals.stop)) {
            break;
        }
    }
    return 0;
}

} // namespace

Runner register_top(CLI::App& app) {
    auto o = std::make_shared<TopCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "top", "The `gua now` view, refreshed in place, with a history line per GPU (? lists the "
               "keys, q quits)");
    add_live_flags(*cmd, o->flags);
    cmd->add_option("--interval", o->interval, "Refresh interval")->capture_default_str();
    cmd->add_option("--count", o->count, "Stop after this many frames");
    cmd->add_flag("--readonly", o->readonly,
                  "No signal keys: k and K (SIGTERM, SIGKILL to the selected holder) are off");
    add_fleet_now_flags(*cmd, o->fleet);
    return [o] { return run(*o); };
}

} // namespace gua::cli
