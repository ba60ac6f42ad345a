// SPDX-License-Identifier: Apache-2.0
// The daemon recording a fake-driver scenario on the simulated clock, and what it recorded, tick by
// tick, as the card_tick view and the block decoder show it: the harness of the per-card field
// tests (health readings, GPM).
#pragma once

#include "e2e/daemon_e2e.hpp"
#include "store/database.hpp"
#include "store/reader.hpp"
#include "telemetry/card_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace gua::e2e {

/// One recorded card-tick: its scenario span and its readings as the view and the decoder show.
struct RecordedTick {
    std::string uuid;
    double from_s = 0;
    double to_s = 0;
    std::map<std::string, std::string> view; ///< the card_tick row
    telemetry::CardReadings decoded;
};

class RecordingTest : public DaemonTest {
  protected:
    /// Runs the daemon over `scenario` for `ticks` ticks of `interval_s`, its first poll at
    /// scenario time `start_s`, and returns every card-tick it recorded, in time order.
    std::vector<RecordedTick> record(const json& scenario, FakeVariant variant, double start_s,
                                     double interval_s, int ticks) {
        write_scenario(scenario);
        set_clock(start_s);
        set_env("GUA_TEST_CLOCK_FILE", path("clock"));
        const test::RunResult r =
            run_daemon({"--interval", fmt::format("{}ms", std::llround(interval_s * 1000)),
                        "--ticks", std::to_string(ticks), "--quiet"},
                       variant, std::chrono::seconds(60));
        EXPECT_EQ(r.exit_code, 0) << r.err;
        test::RawDb raw(db());
        const auto rows = raw.rows("SELECT g.uuid AS uuid, c.* FROM card_tick c "
                                   "JOIN gpu g ON g.id = c.gpu_id ORDER BY c.t0_us, c.gpu_id");
        std::vector<RecordedTick> out;
        if (rows.empty()) {
            ADD_FAILURE() << "the daemon recorded no card-tick";
            return out;
        }
        TimeUs first = std::numeric_limits<TimeUs>::max();
        for (const auto& row : rows) {
            first = std::min<TimeUs>(first, std::stoll(row.at("t0_us")));
        }
        for (const auto& row : rows) {
            RecordedTick c;
            c.uuid = row.at("uuid");
            c.from_s = start_s + static_cast<double>(std::stoll(row.at("t0_us")) - first) / 1e6;
            c.to_s = c.from_s + static_cast<double>(std::stoll(row.at("duration_us"))) / 1e6;
            c.view = row;
            out.push_back(std::move(c));
        }
        store::Database database(db(), store::OpenMode::read_only);
        store::Reader reader(database);
        std::map<std::int64_t, std::string> uuid_of;
        for (const store::GpuRow& g : reader.gpus()) {
            uuid_of[g.id] = g.uuid;
        }
        std::vector<std::pair<std::string, telemetry::CardReadings>> decoded;
        reader.scan(
            std::numeric_limits<TimeUs>::min(), std::numeric_limits<TimeUs>::max(),
            [&](const audit::CardTick& t) { decoded.emplace_back(uuid_of.at(t.gpu), t.readings); });
        EXPECT_EQ(decoded.size(), out.size());
        for (std::size_t i = 0; i < std::min(decoded.size(), out.size()); ++i) {
            EXPECT_EQ(decoded[i].first, out[i].uuid) << i;
            out[i].decoded = decoded[i].second;
        }
        return out;
    }
};

} // namespace gua::e2e
