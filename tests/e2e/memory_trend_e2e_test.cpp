// SPDX-License-Identifier: Apache-2.0
// A process whose memory grows linearly, recorded by the real `gua daemon` on the fake driver in
// real time: `gua now` reads its trend from the database and says when the card will be full.
#include "e2e/daemon_e2e.hpp"

#include <thread>

namespace gua::e2e {
namespace memory_trend_e2e {

class MemoryTrendE2E : public DaemonTest {};

TEST_F(MemoryTrendE2E, NowGivesTheTimeToFullOfLinearGrowth) {
    // 10,000 MiB at scenario second 0, +25 MiB every half second (50 MiB/s), for five minutes.
    constexpr double k_mib_per_s = 50;
    json memory = json::array();
    for (double t = 0; t <= 300; t += 0.5) {
        memory.push_back({t, 10000 + k_mib_per_s * t});
    }
    json grower = holder(0, 0, 60, 4321);
    grower["memory_mib"] = memory;
    write_scenario({{"devices", {{{"util", {{0, 60}}}, {"memory_total_mib", 81559}}}},
                    {"processes", {grower}}});
    auto daemon = start_daemon({"--interval", "1s", "--quiet"});
    const auto ticks = [&] {
        if (!file_exists(db())) {
            return 0;
        }
        test::RawDb raw(db());
        const std::string n = raw.one("SELECT count(*) FROM card_tick");
        return n.empty() ? 0 : std::stoi(n);
    };
    const auto deadline = std::chrono::steady_clock::now() + 90s;
    while (std::chrono::steady_clock::now() < deadline) {
        try {
            if (ticks() >= 26) {
                break;
            }
        } catch (const std::exception&) { // the schema is still being created
        }
        std::this_thread::sleep_for(200ms);
    }
    ASSERT_GE(ticks(), 26) << daemon->err();
    const test::RunResult r = test::run_gua({"now", "--db", db(), "--format", "json"}, env());
    daemon.reset();
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json now = json::parse(r.out);
    ASSERT_EQ(now.at("source").at("kind"), "daemon") << r.out;
    ASSERT_EQ(now.at("holders").size(), 1U) << r.out;
    const json& h = now.at("holders")[0];
    ASSERT_TRUE(h.at("memory_trend_mib_per_hour").is_number()) << h.dump();
    ASSERT_TRUE(h.at("time_to_full_seconds").is_number()) << h.dump();
    const double rate = h.at("memory_trend_mib_per_hour").get<double>() / 3600.0;
    EXPECT_NEAR(rate, k_mib_per_s, 0.1 * k_mib_per_s);
    // The card's free memory at the newest tick, used up at the scenario's rate.
    const json& gpu = now.at("gpus")[0];
    const double free_mib =
        gpu.at("memory_total_mib").get<double>() - gpu.at("memory_used_mib").get<double>();
    const double expected_s = free_mib / k_mib_per_s;
    EXPECT_NEAR(h.at("time_to_full_seconds").get<double>(), expected_s, 0.1 * expected_s);
}

} // namespace memory_trend_e2e
} // namespace gua::e2e
