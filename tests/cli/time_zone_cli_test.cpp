// SPDX-License-Identifier: Apache-2.0
// `--tz local` is the user's $TZ when set (as date(1)), else the system's zone.
#include "support/run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <utility>

namespace gua {
namespace time_zone_cli_test {

using nlohmann::json;

/// The demo's JSON report with --tz local under $TZ = `tz`.
json demo_under(const std::string& tz) {
    const test::RunResult r = test::run_gua({"demo", "--ticks", "20", "-q", "--format", "json",
                                             "--tz", "local", "--start", "2026-05-01T00:00:00Z"},
                                            {{"TZ", tz}});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
}

/// The (weekday, hour) cells of the heatmap that hold recorded time.
std::set<std::pair<int, int>> busy_cells(const json& report) {
    std::set<std::pair<int, int>> out;
    for (const json& cell : report["heatmap"]["cells"]) {
        out.emplace(cell["weekday"].get<int>(), cell["hour"].get<int>());
    }
    return out;
}

TEST(TimeZoneCli, LocalHonoursTheUsersTz) {
    const json tokyo = demo_under("Asia/Tokyo");
    const json utc = demo_under("UTC");
    EXPECT_EQ(tokyo["heatmap"]["time_zone"], "local, JST");
    EXPECT_EQ(utc["heatmap"]["time_zone"], "local, UTC");
    // 2026-05-01 00:00 UTC is Friday 09:00 in Tokyo: the same ticks land 9 hours later.
    EXPECT_EQ(busy_cells(utc), (std::set<std::pair<int, int>>{{5, 0}}));
    EXPECT_EQ(busy_cells(tokyo), (std::set<std::pair<int, int>>{{5, 9}}));
    EXPECT_EQ(demo_under(":Asia/Tokyo")["heatmap"]["time_zone"], "local, JST");
}

} // namespace time_zone_cli_test
} // namespace gua
