// SPDX-License-Identifier: Apache-2.0
// The fleet view of `gua now` and `gua top` from a Prometheus server (docs/fleet-now.md).
#include "cli/now_fleet.hpp"

#include "cli/validators.hpp"
#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "daemon/signals.hpp"
#include "fleet/now.hpp"
#include "live/render.hpp"
#include "live/terminal.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>

namespace gua::cli {

namespace {

report::FleetNowOptions fleet_now_options(const FleetNowFlags& fleet, const LiveFlags& flags) {
    report::FleetNowOptions o;
    o.host_label = fleet.host_label;
    o.window_us = duration_flag("--window", flags.window);
    if (o.window_us < 10 * k_us_per_second || o.window_us > o.lookback_us) {
        throw Fatal(fmt::format("--window: must be between 10s and 24h with --prometheus, not {}",
                                flags.window),
                    ExitCode::usage);
    }
    return o;
}

report::FleetNow read_fleet(const FleetNowFlags& fleet, const report::FleetNowOptions& o) {
    report::PrometheusClient prom(fleet.url, fleet.timeout_us,
                                  std::min(fleet.timeout_us, report::k_prom_request_timeout_us));
    return report::read_fleet_now(prom, o, wall_now());
}

/// `text` cut to `size.rows` − 1 lines (the last of them saying how many were left out) and to
/// `size.columns` columns, then `footer`: a frame that fills the terminal without scrolling.
std::string fit_screen(const std::string& text, const std::string& footer,
                       live::TerminalSize size) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = text.find('\n', start);
        lines.push_back(text.substr(start, end == std::string::npos ? end : end - start));
        start = end == std::string::npos ? text.size() : end + 1;
    }
    const std::size_t rows = size.rows > 1 ? static_cast<std::size_t>(size.rows) - 1 : 0;
    if (rows > 0 && lines.size() > rows) {
        const std::size_t cut = lines.size() - rows + 1;
        lines.resize(rows - 1);
        lines.push_back(fmt::format("… {} more lines (a taller terminal shows them)", cut));
    }
    while (rows > 0 && lines.size() < rows) {
        lines.emplace_back();
    }
    std::string out;
    for (const std::string& line : lines) {
        out += live::clip_to_columns(line, size.columns) + "\n";
    }
    return out + live::clip_to_columns(footer, size.columns);
}

/// True when `bytes` hold a quit key: q, Q, or a lone Esc.
bool quits(const std::string& bytes) {
    return bytes.find_first_of("qQ") != std::string::npos || bytes == "\x1b";
}

} // namespace

void add_fleet_now_flags(CLI::App& cmd, FleetNowFlags& flags) {
    CLI::Option* url =
        cmd.add_option("--prometheus", flags.url,
                       "Show every host's GPUs from the gua daemons a Prometheus server scrapes "
                       "(its root URL, e.g. http://127.0.0.1:9090)")
            ->check(non_empty())
            ->excludes("--db")
            ->excludes("--nvml-library");
    cmd.add_option("--host-label", flags.host_label,
                   "With --prometheus: the label that names a host")
        ->check(prometheus_label_name())
        ->capture_default_str()
        ->needs(url);
    add_positive_duration(
        cmd, "--prometheus-timeout", flags.timeout_us,
        "With --prometheus: the longest one view may wait for the server (default 30s)")
        ->needs(url);
}

int print_fleet_now(const FleetNowFlags& fleet, const LiveFlags& flags, const std::string& format) {
    const report::FleetNow view = read_fleet(fleet, fleet_now_options(fleet, flags));
    const std::string out = format == "json" ? report::render_fleet_now_json(view)
                                             : report::render_fleet_now_text(view);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    return 0;
}

int run_fleet_top(const FleetNowFlags& fleet, const LiveFlags& flags, DurationUs refresh_us,
                  std::optional<std::uint64_t> count) {
    const report::FleetNowOptions o = fleet_now_options(fleet, flags);
    report::FleetNow view =
        read_fleet(fleet, o); // a bad URL or server ends here, before the screen
    daemon::SignalFlags& signals = daemon::install_signal_handlers();
    const bool tty = isatty(STDOUT_FILENO) == 1;
    const int key_fd = tty && isatty(STDIN_FILENO) == 1 ? STDIN_FILENO : -1;
    std::optional<live::TerminalSession> session;
    std::optional<live::ResizeSignal> resize;
    if (tty) {
        session.emplace(key_fd, STDOUT_FILENO);
        resize.emplace();
    }
    const std::string header =
        fmt::format("gua top — the fleet via Prometheus, every {}\n", format_duration(refresh_us));
    const std::string footer = "q quit · read-only: no signal keys for remote processes";
    std::string problem;
    const auto draw = [&] {
        const std::string text =
            header + (problem.empty() ? "" : problem + "\n") + report::render_fleet_now_text(view);
        if (session) {
            session->draw(fit_screen(text, footer, live::terminal_size(STDOUT_FILENO)));
            return;
        }
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fputs("\n", stdout);
        std::fflush(stdout);
    };
    SystemClock clock;
    for (std::uint64_t frame = 1;; ++frame) {
        draw();
        if (count && frame >= *count) {
            return 0;
        }
        const std::int64_t deadline = clock.mono_now() + refresh_us;
        for (DurationUs left = refresh_us; left > 0; left = deadline - clock.mono_now()) {
            const live::Input in =
                live::wait_for_input(key_fd, resize ? resize->fd() : -1, left, signals.stop);
            if (signals.stop.load() || quits(in.bytes) || in.closed) {
                return 0;
            }
            if (in.resized && resize && resize->take()) {
                draw();
            }
        }
        try {
            view = read_fleet(fleet, o);
            problem.clear();
        } catch (const Fatal& e) { // keep the last view, say why it is old, try again
            problem = fmt::format("! {} (showing the view of {})", e.what(),
                                  format_iso8601(view.now / k_us_per_second * k_us_per_second));
        }
    }
}

} // namespace gua::cli
