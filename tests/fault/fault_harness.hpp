// SPDX-License-Identifier: Apache-2.0
// Shared checks of the fault-matrix suite (docs/TESTING.md): after every fault, the database
// passes PRAGMA integrity_check, every tick the daemon logged as written is in it, and the report
// accounts for all recorded card time (three states + unmeasured = the union of each card's
// card-tick spans, computed here from the rows, not taken from gua).
#pragma once

#include "core/time.hpp"
#include "e2e/daemon_e2e.hpp"
#include "support/small_fs.hpp"

#include <algorithm>
#include <fcntl.h>
#include <limits>
#include <regex>
#include <sys/mount.h>
#include <unistd.h>
#include <utility>

namespace gua::fault {

using e2e::json;
using namespace std::chrono_literals;

/// Tick lines ("…Z tick N  GPU-0=…") in a daemon log: the daemon logs a tick after storing it.
inline int logged_ticks(const std::string& log) {
    return test::count_of(log, "Z tick ");
}

using test::fill_file_system;
using test::Tmpfs;

class FaultTest : public e2e::DaemonTest {
  protected:
    /// Two held cards (one busy, one idle-held) and a holder that is this test process.
    json two_cards() const {
        const int me = static_cast<int>(getpid());
        return {{"devices",
                 {{{"util", e2e::square_wave(20, 40, 100000, 90, 3)}}, {{"util", {{0, 2}}}}}},
                {"processes", {e2e::holder(0, 8000, 90, me), e2e::holder(1, 6000, 0, me)}}};
    }

    /// Runs the daemon on the simulated clock (GUA_TEST_CLOCK_FILE) from scenario time `start_s`.
    void use_simulated_clock(double start_s = 0) {
        set_clock(start_s);
        set_env("GUA_TEST_CLOCK_FILE", path("clock"));
    }

    /// `PRAGMA integrity_check` of the database, rows joined ("ok" when sound).
    std::string integrity() const {
        test::RawDb raw(db());
        std::string out;
        for (const auto& row : raw.rows("PRAGMA integrity_check")) {
            out += (out.empty() ? "" : "; ") + row.begin()->second;
        }
        return out;
    }

    /// Ticks recorded by each run, in run order: the card-ticks of its most recorded card (a
    /// clock stepped back can repeat a tick's start time, so starts are not counted).
    std::vector<std::int64_t> ticks_per_run() const {
        test::RawDb raw(db());
        std::vector<std::int64_t> out;
        for (const auto& row : raw.rows(
                 "SELECT r.id AS id, (SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM "
                 "card_tick c WHERE c.run_id = r.id GROUP BY c.gpu_id)) AS n FROM run r ORDER BY "
                 "r.id")) {
            out.push_back(std::stoll(row.at("n")));
        }
        return out;
    }

    /// Recorded seconds per GPU uuid: the union of its card-ticks' [t0, t0 + duration) spans.
    std::map<std::string, double> recorded_union_s() const {
        test::RawDb raw(db());
        std::map<std::string, std::vector<std::pair<TimeUs, TimeUs>>> spans;
        for (const auto& row : raw.rows("SELECT g.uuid AS uuid, c.t0_us AS t0, c.duration_us AS d "
                                        "FROM card_tick c JOIN gpu g ON g.id = c.gpu_id")) {
            const TimeUs t0 = std::stoll(row.at("t0"));
            spans[row.at("uuid")].emplace_back(t0, t0 + std::stoll(row.at("d")));
        }
        std::map<std::string, double> out;
        for (auto& [uuid, list] : spans) {
            std::sort(list.begin(), list.end());
            TimeUs total = 0;
            TimeUs covered_to = std::numeric_limits<TimeUs>::min();
            for (const auto& [from, to] : list) {
                const TimeUs start = std::max(from, covered_to);
                if (to > start) {
                    total += to - start;
                }
                covered_to = std::max(covered_to, to);
            }
            out[uuid] = static_cast<double>(total) / 1e6;
        }
        return out;
    }

    /// The JSON report over every recorded tick (window: an hour either side of them).
    json report_over_everything() const {
        test::RawDb raw(db());
        const std::string first = raw.one("SELECT min(t0_us) FROM card_tick");
        const std::string last = raw.one("SELECT max(t0_us + duration_us) FROM card_tick");
        if (first.empty() || first == "NULL") {
            return json::object();
        }
        const TimeUs from = std::stoll(first) - k_us_per_hour;
        const TimeUs to = std::stoll(last) + k_us_per_hour;
        const test::RunResult r =
            test::run_gua({"report", "--db", db(), "--from", format_iso8601(from), "--to",
                           format_iso8601(to), "--format", "json"});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.exit_code == 0 ? json::parse(r.out) : json::object();
    }

    /// The invariants every cell ends with: integrity ok, and the report accounts for exactly the
    /// recorded time of every card (counted once where card-ticks overlap).
    void expect_sound_and_consistent() const {
        EXPECT_EQ(integrity(), "ok");
        const std::map<std::string, double> recorded = recorded_union_s();
        const json r = report_over_everything();
        if (recorded.empty()) {
            return;
        }
        ASSERT_TRUE(r.contains("gpus")) << r.dump();
        EXPECT_EQ(r.at("gpus").size(), recorded.size()) << r.at("gpus").dump();
        for (const json& g : r.at("gpus")) {
            const std::string uuid = g.at("uuid");
            ASSERT_TRUE(recorded.contains(uuid)) << uuid;
            const json& s = g.at("states");
            const double states_s = 3600.0 * (s.at("active_gpu_hours").get<double>() +
                                              s.at("idle_held_gpu_hours").get<double>() +
                                              s.at("truly_idle_gpu_hours").get<double>() +
                                              s.at("unmeasured_gpu_hours").get<double>());
            EXPECT_NEAR(states_s, recorded.at(uuid), 0.01) << uuid;
            EXPECT_NEAR(s.at("active").get<double>() + s.at("idle_held").get<double>() +
                            s.at("truly_idle").get<double>() + s.at("unmeasured").get<double>(),
                        1.0, 1e-9)
                << uuid;
        }
    }
};

} // namespace gua::fault
