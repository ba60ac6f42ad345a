// SPDX-License-Identifier: Apache-2.0
// Doctor: the database, the service (or background daemon) and the configuration file.
#include "core/duration.hpp"
#include "core/units.hpp"
#include "ops/doctor.hpp"
#include "ops/unit_file.hpp"
#include "store/database.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <unistd.h>

namespace gua::ops {

namespace fs = std::filesystem;

namespace {

Finding running_finding(const Installation& installed) {
    Finding f{"daemon", "daemon", Severity::ok, "", ""};
    if (installed.mode != RunMode::none) {
        f.message = fmt::format("{} running (pid {})", to_string(installed.mode),
                                installed.daemon ? installed.daemon->pid : 0);
        return f;
    }
    f.severity = Severity::warn;
    f.message = "no daemon is recording";
    if (installed.pid_file.status == PidFileInfo::Status::stale) {
        f.message += " (stale pid file: " + installed.pid_file.reason + ")";
    }
    f.fix = "`gua start`";
    return f;
}

Finding unit_finding(const Installation& installed) {
    Finding f{"service", "service", Severity::ok, "", ""};
    if (!installed.unit_path) {
        f.severity = Severity::warn;
        f.message = fmt::format("{} is not installed", k_unit_name);
        f.fix = "`sudo gua start` (installs, enables and starts it), or install the gua package";
        return f;
    }
    f.message = fmt::format("{} installed ({}), {}, {}", k_unit_name, *installed.unit_path,
                            installed.enabled == true    ? "enabled"
                            : installed.enabled == false ? "disabled"
                                                         : "enablement unknown",
                            installed.active);
    if (installed.mode != RunMode::service && installed.mode != RunMode::none) {
        f.message += fmt::format("; a {} records instead", to_string(installed.mode));
    } else if (installed.active == "failed") {
        f.severity = Severity::fail;
        f.fix = "see `journalctl -u gua.service`, then `sudo gua start`";
    } else if (installed.enabled != true || installed.active != "active") {
        f.severity = Severity::warn;
        f.fix = "`sudo gua start`";
    }
    return f;
}

Finding hardening_finding(const DoctorInputs& in, const Installation& installed) {
    Finding f{"unit_hardening", "unit hardening", Severity::ok, "", ""};
    const UnitSettings unit = read_unit_settings(
        *installed.unit_path, in.paths.under_root("/etc/systemd/system/gua.service.d"));
    std::vector<std::string> problems = blocking_settings(unit);
    const DurationUs interval = in.config
                                    ? in.config.value().interval_us.value_or(30 * k_us_per_second)
                                    : 30 * k_us_per_second;
    if (unit.watchdog_us && *unit.watchdog_us > 0 && 2 * interval > *unit.watchdog_us) {
        problems.push_back(fmt::format("WatchdogSec={} is less than twice the {} interval, so "
                                       "systemd would kill the daemon between ticks",
                                       format_duration(*unit.watchdog_us),
                                       format_duration(interval)));
    }
    if (problems.empty()) {
        f.message = "lets the daemon read /proc and /dev/nvidia*; watchdog fits the interval";
        return f;
    }
    f.severity = Severity::fail;
    for (const std::string& p : problems) {
        f.message += (f.message.empty() ? "" : "; ") + p;
    }
    f.fix = "remove or override these with `systemctl edit gua` (see the comments in the unit)";
    return f;
}

} // namespace

Finding check_database(const std::string& db) {
    Finding f{"database", "database", Severity::ok, "", ""};
    std::error_code ec;
    if (!fs::exists(db, ec)) {
        fs::path dir = fs::path(db).parent_path();
        while (!dir.empty() && !fs::exists(dir, ec)) {
            dir = dir.parent_path();
        }
        if (::access(dir.c_str(), W_OK) != 0) {
            f.severity = Severity::fail;
            f.message = fmt::format("{} does not exist and {} is not writable", db, dir.string());
            f.fix = "run `sudo gua start`, or set [daemon] db to a writable place";
            return f;
        }
        f.message = fmt::format("{} does not exist yet; the daemon creates it", db);
        return f;
    }
    try {
        store::Database database(db, store::OpenMode::read_only);
        const std::int64_t version = database.scalar("PRAGMA user_version");
        const auto size = fs::file_size(db, ec);
        f.message =
            fmt::format("{}: readable, schema v{}, {}", db, version, format_bytes(ec ? 0 : size));
    } catch (const std::exception& e) {
        f.severity = Severity::fail;
        f.message = e.what();
        f.fix = "move the file away (gua creates a new one) or set [daemon] db";
        return f;
    }
    if (::access(db.c_str(), W_OK) == 0 &&
        ::access(fs::path(db).parent_path().c_str(), W_OK) == 0) {
        f.message += ", writable";
    } else {
        f.message += ", read-only for you (the service writes it as user gua)";
    }
    return f;
}

std::vector<Finding> check_service(const DoctorInputs& in, const Installation& installed) {
    std::vector<Finding> out;
    if (in.paths.scope == Scope::user) {
        out.push_back(running_finding(installed));
        return out;
    }
    if (!installed.systemd) {
        out.push_back({"service", "service", Severity::info,
                       "systemd is not running here; `gua start` runs the daemon in the "
                       "background",
                       ""});
        out.push_back(running_finding(installed));
        return out;
    }
    out.push_back(unit_finding(installed));
    if (installed.unit_path) {
        out.push_back(hardening_finding(in, installed));
    }
    return out;
}

Finding check_config(const DoctorInputs& in, const Installation& installed) {
    Finding f{"config", "configuration", Severity::ok, "", ""};
    if (!in.config_file_exists) {
        const bool needed = installed.unit_path && in.paths.scope == Scope::system;
        f.severity = needed ? Severity::fail : Severity::ok;
        f.message = fmt::format("{} does not exist{}", in.paths.config_file,
                                needed ? ", but the unit runs with --config" : "; defaults apply");
        f.fix = needed ? "`sudo gua start` writes the default configuration" : "";
        return f;
    }
    if (!in.config) {
        f.severity = Severity::fail;
        f.message = in.config.error().message;
        f.fix = fmt::format("edit {} (`man gua` lists the keys)", in.paths.config_file);
        return f;
    }
    const config::Config& c = in.config.value();
    f.message = fmt::format("{} is valid (interval {}, active at >= {} % SM, held above {} MiB)",
                            in.paths.config_file,
                            format_duration(c.interval_us.value_or(30 * k_us_per_second)),
                            c.thresholds.active_util_pct, c.thresholds.held_mib);
    return f;
}

} // namespace gua::ops
