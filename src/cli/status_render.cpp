// SPDX-License-Identifier: Apache-2.0
// `gua status` text and JSON.
#include "cli/status_render.hpp"

#include "core/duration.hpp"
#include "core/units.hpp"
#include "ops/format.hpp"
#include "ops/process.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gua::cli {

namespace {

std::string ago(TimeUs t, TimeUs now) {
    return now > t ? format_duration(std::max<DurationUs>(now - t, k_us_per_second)) + " ago"
                   : "just now";
}

std::string verdict(const StatusView& v) {
    const ops::Installation& in = v.installed;
    if (in.mode == ops::RunMode::none) {
        std::string line = "gua is not running";
        if (in.pid_file.status == ops::PidFileInfo::Status::stale) {
            line += fmt::format(" (stale pid file {}: {}; `gua start` replaces it)",
                                v.context.paths.pid_file, in.pid_file.reason);
        }
        return line + "; start it with `gua start`\n";
    }
    std::string line = fmt::format("gua is running: {}", to_string(in.mode));
    if (in.daemon) {
        const TimeUs since = ops::start_time(in.daemon->start_ticks);
        line += fmt::format(", pid {}, since {} ({})", in.daemon->pid, format_iso8601(since),
                            ago(since, v.now));
    }
    return line + "\n";
}

std::string service_line(const StatusView& v) {
    const ops::Installation& in = v.installed;
    if (v.context.paths.scope == ops::Scope::user) {
        return "none (your own daemon; the system service is `sudo gua status`)";
    }
    if (!in.unit_path) {
        return fmt::format("{} not installed{}", ops::k_unit_name,
                           in.systemd ? "" : " (systemd is not running here)");
    }
    return fmt::format("{} installed at {}, {}, {}", ops::k_unit_name, *in.unit_path,
                       in.enabled == true    ? "enabled"
                       : in.enabled == false ? "disabled"
                                             : "enablement unknown",
                       in.active);
}

void database_lines(const StatusView& v, std::string& out) {
    const ops::DatabaseSummary& d = v.database;
    const auto row = [&out](const char* label, const std::string& value) {
        out += fmt::format("  {:<11} {}\n", label, value);
    };
    if (!d.exists) {
        row("database", v.context.db + " does not exist yet");
        return;
    }
    if (!d.error.empty()) {
        row("database", fmt::format("{}: {}", v.context.db, d.error));
        return;
    }
    std::string db = fmt::format("{} ({})", v.context.db, format_bytes(d.size_bytes));
    if (d.first_tick && d.last_tick_end) {
        db += fmt::format(", data from {} to {}", format_iso8601(*d.first_tick),
                          format_iso8601(*d.last_tick_end));
    }
    row("database", db);
    if (d.last_run) {
        row("interval",
            fmt::format("{} (run {} started {})", format_duration(d.last_run->interval_us),
                        d.last_run->id, format_iso8601(d.last_run->started_us)));
    }
    std::string gpus = fmt::format("{} in the last tick", d.gpus.size());
    for (std::size_t i = 0; i < d.gpus.size(); ++i) {
        gpus += fmt::format("{}{} {} ({})", i == 0 ? ": " : ", ", d.gpus[i].index, d.gpus[i].name,
                            d.gpus[i].uuid);
    }
    row("GPUs", gpus);
    row("last tick", d.last_tick_end ? fmt::format("{} ({})", format_iso8601(*d.last_tick_end),
                                                   ago(*d.last_tick_end, v.now))
                                     : "none yet");
    row("quality", d.problems.empty() ? "no problems" : d.problems.front());
    for (std::size_t i = 1; i < d.problems.size(); ++i) {
        row("", d.problems[i]);
    }
    if (d.last_hour) {
        const report::StateShares& h = *d.last_hour;
        const std::string unmeasured =
            h.unmeasured > 0 ? fmt::format(", unmeasured {:.1f} %", 100 * h.unmeasured) : "";
        row("last hour",
            fmt::format("active {:.1f} %, idle-held {:.1f} %, truly idle {:.1f} %{} of {}",
                        100 * h.active, 100 * h.idle_held, 100 * h.truly_idle, unmeasured,
                        ops::format_gpu_time(h.active_hours + h.idle_held_hours +
                                             h.truly_idle_hours + h.unmeasured_hours)));
    } else {
        row("last hour", "no data");
    }
}

} // namespace

std::string render_status_text(const StatusView& v) {
    std::string out = verdict(v);
    for (const ops::DaemonAlert alert : v.installed.alerts) {
        out += fmt::format("  {:<11} {}; {}\n", "ALERT", ops::describe(alert), ops::fix_for(alert));
    }
    database_lines(v, out);
    out += fmt::format("  {:<11} {}\n", "service", service_line(v));
    if (v.installed.mode == ops::RunMode::background) {
        out += fmt::format("  {:<11} pid file {}, log {}\n", "files", v.context.paths.pid_file,
                           v.context.paths.log_file);
    }
    return out;
}

std::string render_status_json(const StatusView& v) {
    using nlohmann::json;
    const ops::Installation& in = v.installed;
    const ops::DatabaseSummary& d = v.database;
    const auto time_or_null = [](const std::optional<TimeUs>& t) {
        return t ? json(format_iso8601(*t)) : json(nullptr);
    };
    json j;
    j["schema_version"] = k_status_json_schema_version;
    j["running"] = in.mode != ops::RunMode::none;
    j["mode"] = in.mode == ops::RunMode::none ? json(nullptr) : json(to_string(in.mode));
    j["pid"] = in.daemon ? json(in.daemon->pid) : json(nullptr);
    j["since"] =
        in.daemon ? json(format_iso8601(ops::start_time(in.daemon->start_ticks))) : json(nullptr);
    j["alerts"] = json::array();
    for (const ops::DaemonAlert alert : in.alerts) {
        j["alerts"].push_back(std::string(ops::describe(alert)));
    }
    j["stale_pid_file"] = in.pid_file.status == ops::PidFileInfo::Status::stale
                              ? json(in.pid_file.reason)
                              : json(nullptr);
    j["pid_file"] = v.context.paths.pid_file;
    j["log_file"] = v.context.paths.log_file;
    j["service"] = {{"systemd", in.systemd},
                    {"unit", in.unit_path ? json(*in.unit_path) : json(nullptr)},
                    {"enabled", in.enabled ? json(*in.enabled) : json(nullptr)},
                    {"active", in.active}};
    json gpus = json::array();
    for (const store::GpuRow& g : d.gpus) {
        gpus.push_back({{"index", g.index}, {"uuid", g.uuid}, {"name", g.name}});
    }
    j["database"] = {{"path", v.context.db},
                     {"exists", d.exists},
                     {"error", d.error.empty() ? json(nullptr) : json(d.error)},
                     {"size_bytes", d.size_bytes},
                     {"first_tick", time_or_null(d.first_tick)},
                     {"last_tick_end", time_or_null(d.last_tick_end)},
                     {"interval_s", d.last_run
                                        ? json(static_cast<double>(d.last_run->interval_us) / 1e6)
                                        : json(nullptr)},
                     {"gpus", gpus},
                     {"problems", d.problems}};
    if (d.last_hour) {
        j["last_hour"] = {{"active", d.last_hour->active},
                          {"idle_held", d.last_hour->idle_held},
                          {"truly_idle", d.last_hour->truly_idle},
                          {"unmeasured", d.last_hour->unmeasured},
                          {"gpu_hours", d.last_hour->active_hours + d.last_hour->idle_held_hours +
                                            d.last_hour->truly_idle_hours +
                                            d.last_hour->unmeasured_hours}};
    } else {
        j["last_hour"] = nullptr;
    }
    return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

} // namespace gua::cli
