// SPDX-License-Identifier: Apache-2.0
// Planning `gua stop`.
#include "ops/stop_plan.hpp"

#include "ops/background.hpp"
#include "ops/lock_holder.hpp"
#include "ops/steps.hpp"
#include "store/database.hpp"
#include "store/reader.hpp"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace gua::ops {

namespace {

Step signal_step(const std::string& what, const ProcessId& id, const std::string& log_file,
                 const std::string& db, DurationUs timeout) {
    return Step{fmt::format("stop the {} (pid {}): SIGTERM, then wait up to {}s for its final "
                            "flush",
                            what, id.pid, timeout / k_us_per_second),
                [=]() -> Result<std::string> {
                    if (!terminate_and_wait(id, timeout)) {
                        return Error{fmt::format("pid {} is still running after {}s", id.pid,
                                                 timeout / k_us_per_second)};
                    }
                    const std::string line = log_file.empty() ? "" : last_log_line(log_file);
                    if (line.find("gua daemon stopped") != std::string::npos) {
                        return line;
                    }
                    return final_flush_summary(db);
                }};
}

// After `systemctl stop` returns the unit is stopped; this waits for the lock to be released
// too (a daemon run by hand on the same database would keep it) and reports the flush.
Step await_unlock_step(const std::string& db, DurationUs timeout) {
    return Step{fmt::format("wait up to {}s for the database lock to be released",
                            timeout / k_us_per_second),
                [=]() -> Result<std::string> {
                    const auto deadline =
                        std::chrono::steady_clock::now() + std::chrono::microseconds(timeout);
                    while (database_lock_holder(db)) {
                        if (std::chrono::steady_clock::now() > deadline) {
                            return Error{fmt::format("pid {} still holds the lock of {}",
                                                     *database_lock_holder(db), db)};
                        }
                        std::this_thread::sleep_for(std::chrono::milliseconds(50));
                    }
                    return final_flush_summary(db);
                }};
}

} // namespace

std::vector<Step> plan_stop(const Paths& paths, const std::string& db,
                            const Installation& installed, const Systemctl& systemctl,
                            DurationUs timeout) {
    std::vector<Step> steps;
    switch (installed.mode) {
    case RunMode::service:
        steps.push_back(systemctl_step(systemctl, "stop"));
        if (systemctl.can_run("stop")) {
            steps.push_back(await_unlock_step(db, timeout));
        }
        break;
    case RunMode::background:
        steps.push_back(
            signal_step("background daemon", installed.pid_file.id, paths.log_file, db, timeout));
        steps.push_back(remove_file(paths.pid_file, "pid file"));
        break;
    case RunMode::foreground:
        if (installed.daemon) {
            steps.push_back(signal_step("foreground daemon", *installed.daemon, "", db, timeout));
        }
        break;
    case RunMode::none:
        break;
    }
    if (installed.mode != RunMode::background &&
        installed.pid_file.status == PidFileInfo::Status::stale) {
        steps.push_back(
            remove_file(paths.pid_file, "stale pid file: " + installed.pid_file.reason));
    }
    return steps;
}

std::string final_flush_summary(const std::string& db) {
    std::error_code ec;
    if (!std::filesystem::exists(db, ec)) {
        return {};
    }
    try {
        store::Database database(db, store::OpenMode::read_only);
        const std::vector<store::RunRow> runs = store::Reader(database).runs();
        if (runs.empty()) {
            return {};
        }
        const store::RunRow& last = runs.back();
        if (!last.ended_us) {
            return fmt::format("run {} has no end time: the daemon did not flush", last.id);
        }
        return fmt::format("final flush at {} (run {} ended)", format_iso8601(*last.ended_us),
                           last.id);
    } catch (const std::exception& e) {
        return e.what();
    }
}

} // namespace gua::ops
