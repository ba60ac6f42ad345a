// SPDX-License-Identifier: Apache-2.0
// End to end: "recorded more than once" only for real overlaps. One daemon on the real clock at
// 1 s, 5 s and 30 s ticks (three at once, each with its own database) is never reported as
// overlapping itself; two runs recording one database over the same time still are.
// GUA_TEST_OVERLAP_SECONDS sets how long the single daemons run (default 35 s; docs/TESTING.md).
#include "audit/window.hpp"
#include "core/time.hpp"
#include "e2e/daemon_e2e.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <thread>

namespace gua::e2e::daemon_overlap_test {
namespace {

class DaemonOverlap : public DaemonTest {};

/// Seconds each single daemon records: GUA_TEST_OVERLAP_SECONDS, or 35 (two 30 s ticks).
int run_seconds() {
    const char* env = std::getenv("GUA_TEST_OVERLAP_SECONDS");
    return env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : 35;
}

/// Per card: the sum of the parts of its card-ticks that an earlier card-tick of the same card
/// already covered, and the largest of them, in µs (the report's rule, computed from the rows).
struct Overlaps {
    std::int64_t total_us = 0;
    /// The overlaps the report states: each beyond the clock-jitter tolerance of its card-tick.
    std::int64_t reported_us = 0;
    std::int64_t largest_us = 0;
    std::int64_t largest_gap_us = 0;
    std::size_t ticks = 0;
};

Overlaps overlaps_in(const std::string& db) {
    test::RawDb raw(db);
    const auto rows = raw.rows("SELECT gpu_id, t0_us, duration_us FROM card_tick ORDER BY gpu_id, "
                               "t0_us");
    Overlaps out;
    std::map<std::string, std::int64_t> covered;
    for (const auto& row : rows) {
        const std::int64_t t0 = std::stoll(row.at("t0_us"));
        const std::int64_t end = t0 + std::stoll(row.at("duration_us"));
        const auto it = covered.find(row.at("gpu_id"));
        if (it != covered.end()) {
            const std::int64_t overlap = std::max<std::int64_t>(std::min(it->second, end) - t0, 0);
            out.total_us += overlap;
            const std::int64_t duration = end - t0;
            out.reported_us += overlap > audit::overlap_jitter_us(duration) ? overlap : 0;
            out.largest_us = std::max(out.largest_us, overlap);
            out.largest_gap_us = std::max(out.largest_gap_us, t0 - it->second);
            it->second = std::max(it->second, end);
        } else {
            covered[row.at("gpu_id")] = end;
        }
        ++out.ticks;
    }
    return out;
}

json busy_two_cards() {
    return {{"devices", {{{"util", {{0, 70}}}}, {{"util", square_wave(3, 2, 7200)}}}}};
}

TEST_F(DaemonOverlap, SingleDaemonIsNeverReportedAsRecordedMoreThanOnce) {
    write_scenario(busy_two_cards());
    const int seconds = run_seconds();
    const std::vector<int> intervals{1, 5, 30};
    std::vector<std::unique_ptr<test::BackgroundProcess>> daemons;
    for (const int interval : intervals) {
        const std::string db_path = path(fmt::format("gua-{}s.db", interval));
        std::vector<std::string> args{"daemon",       "--db",        db_path,
                                      "--config",     config_path(), "--nvml-library",
                                      fake_library(), "--interval",  fmt::format("{}s", interval),
                                      "--quiet"};
        daemons.push_back(test::start_gua(args, env(), m_dir.path(), fmt::format("d{}", interval)));
    }
    for (auto& d : daemons) {
        ASSERT_TRUE(d->wait_for("gua daemon started", 30s)) << d->err();
    }
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    for (auto& d : daemons) {
        d->signal(SIGTERM);
    }
    for (std::size_t i = 0; i < intervals.size(); ++i) {
        ASSERT_EQ(daemons[i]->wait_exit(60s), 0) << daemons[i]->err();
        const std::string db_path = path(fmt::format("gua-{}s.db", intervals[i]));
        const Overlaps rows = overlaps_in(db_path);
        // Most of the whole ticks that fit, on each of the two cards (a loaded machine may make
        // the loop skip a tick ahead rather than catch up).
        EXPECT_GE(rows.ticks, static_cast<std::size_t>(seconds / intervals[i])) << intervals[i];
        const std::string what = fmt::format(
            "{} s ticks over {} s: {} card-ticks, overlaps {} µs in all (largest {} µs), largest "
            "gap {} µs",
            intervals[i], seconds, rows.ticks, rows.total_us, rows.largest_us, rows.largest_gap_us);
        std::printf("[ overlap  ] %s\n", what.c_str());
        EXPECT_LE(rows.largest_us, audit::overlap_jitter_us(intervals[i] * k_us_per_second))
            << what;
        const test::RunResult text = test::run_gua({"report", "--db", db_path, "--since", "1d"});
        ASSERT_EQ(text.exit_code, 0) << text.err;
        EXPECT_EQ(text.out.find("recorded more than once"), std::string::npos) << what << "\n"
                                                                               << text.out;
        const test::RunResult j =
            test::run_gua({"report", "--db", db_path, "--since", "1d", "--format", "json"});
        ASSERT_EQ(j.exit_code, 0) << j.err;
        EXPECT_EQ(json::parse(j.out)["coverage"]["overlap_seconds"].get<double>(), 0.0) << what;
    }
}

// Ten minutes on the simulated clock (the daemon's and the fake driver's) at 1 s, 5 s and 30 s
// ticks, one daemon per database: 600, 120 and 20 ticks of two cards, contiguous (no overlap,
// no gap between a card's ticks, from the rows), and no report says "recorded more than once".
TEST_F(DaemonOverlap, TenSimulatedMinutesOfOneDaemonAreNeverRecordedTwice) {
    write_scenario(busy_two_cards());
    set_env("GUA_TEST_CLOCK_FILE", path("clock"));
    constexpr int k_seconds = 600;
    for (const int interval : {1, 5, 30}) {
        set_clock(100);
        const std::string db_path = path(fmt::format("sim-{}s.db", interval));
        const std::vector<std::string> args{"daemon",
                                            "--db",
                                            db_path,
                                            "--config",
                                            config_path(),
                                            "--nvml-library",
                                            fake_library(),
                                            "--interval",
                                            fmt::format("{}s", interval),
                                            "--ticks",
                                            std::to_string(k_seconds / interval),
                                            "--quiet"};
        auto daemon = test::start_gua(args, env(), m_dir.path(), fmt::format("sim{}", interval));
        ASSERT_EQ(daemon->wait_exit(120s), 0) << daemon->err();
        const Overlaps rows = overlaps_in(db_path);
        const std::string what =
            fmt::format("{} s ticks over {} simulated s: {} card-ticks, overlaps {} µs in all, "
                        "largest gap {} µs",
                        interval, k_seconds, rows.ticks, rows.total_us, rows.largest_gap_us);
        std::printf("[ overlap  ] %s\n", what.c_str());
        EXPECT_EQ(rows.ticks, static_cast<std::size_t>(2 * k_seconds / interval)) << what;
        EXPECT_EQ(rows.total_us, 0) << what;
        EXPECT_EQ(rows.largest_gap_us, 0) << what;
        // The simulated run lies up to ten minutes ahead of the real clock.
        const std::vector<std::string> report{"report",
                                              "--db",
                                              db_path,
                                              "--from",
                                              format_iso8601(wall_now() - k_us_per_hour),
                                              "--to",
                                              format_iso8601(wall_now() + k_us_per_hour)};
        const test::RunResult text = test::run_gua(report);
        ASSERT_EQ(text.exit_code, 0) << text.err;
        EXPECT_EQ(text.out.find("recorded more than once"), std::string::npos) << what << "\n"
                                                                               << text.out;
        std::vector<std::string> as_json = report;
        as_json.insert(as_json.end(), {"--format", "json"});
        const test::RunResult j = test::run_gua(as_json);
        ASSERT_EQ(j.exit_code, 0) << j.err;
        EXPECT_EQ(json::parse(j.out)["coverage"]["overlap_seconds"].get<double>(), 0.0) << what;
    }
}

// The lock keeps a second daemon off a database being recorded; two runs on the simulated clock,
// one after the other, record the same stretch of wall time as two daemons would have. The
// report counts that time once and says how much was recorded twice: the overlap of the two
// runs' card-ticks, computed here from the rows.
TEST_F(DaemonOverlap, TwoRunsOverTheSameTimeAreReported) {
    write_scenario(busy_two_cards());
    set_clock(100);
    set_env("GUA_TEST_CLOCK_FILE", path("clock"));
    for (int run = 0; run < 2; ++run) {
        set_clock(100);
        const test::RunResult r =
            run_daemon({"--interval", "10s", "--ticks", "6", "--quiet"}, FakeVariant::modern, 60s);
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    const Overlaps rows = overlaps_in(db());
    ASSERT_GT(rows.total_us, 0) << "the second run started within the first's 60 s";
    // The simulated runs lie up to a minute ahead of the real clock.
    const std::vector<std::string> window{"--from", format_iso8601(wall_now() - k_us_per_hour),
                                          "--to", format_iso8601(wall_now() + k_us_per_hour)};
    std::vector<std::string> args{"report", "--db", db(), "--format", "json"};
    args.insert(args.end(), window.begin(), window.end());
    const test::RunResult j = test::run_gua(args);
    ASSERT_EQ(j.exit_code, 0) << j.err;
    EXPECT_NEAR(json::parse(j.out)["coverage"]["overlap_seconds"].get<double>(),
                static_cast<double>(rows.reported_us) / 1e6, 1e-3);
    args = {"report", "--db", db()};
    args.insert(args.end(), window.begin(), window.end());
    const test::RunResult text = test::run_gua(args);
    EXPECT_NE(text.out.find("recorded more than once"), std::string::npos) << text.out;
}

// Two daemons forced onto one database at once (the second past the lock by a test-only
// LD_PRELOAD library, tests/tools/no_ofd_lock.cpp) record the same two cards over the same
// seconds: the report still says "recorded more than once", with the overlap the rows show.
TEST_F(DaemonOverlap, TwoDaemonsForcedOntoOneDatabaseAreReported) {
    write_scenario(busy_two_cards());
    const std::vector<std::string> args = daemon_args({"--interval", "1s", "--quiet"});
    auto first = test::start_gua(args, env(), m_dir.path(), "first");
    ASSERT_TRUE(first->wait_for("gua daemon started", 30s)) << first->err();
    std::map<std::string, std::string> forced = env();
    forced["LD_PRELOAD"] = std::string(GUA_BUILD_DIR) + "/tests/tools/gua-no-ofd-lock.so";
    const char* asan = std::getenv("ASAN_OPTIONS"); // an ASan build's runtime must come first
    forced["ASAN_OPTIONS"] = std::string(asan != nullptr ? asan : "") + ":verify_asan_link_order=0";
    auto second = test::start_gua(args, forced, m_dir.path(), "second");
    ASSERT_TRUE(second->wait_for("gua daemon started", 30s)) << second->err();
    std::this_thread::sleep_for(6s);
    first->signal(SIGTERM);
    second->signal(SIGTERM);
    ASSERT_EQ(first->wait_exit(60s), 0) << first->err();
    ASSERT_EQ(second->wait_exit(60s), 0) << second->err();
    const Overlaps rows = overlaps_in(db());
    ASSERT_GT(rows.total_us, 2 * k_us_per_second) << "both recorded the same seconds";
    const test::RunResult j =
        test::run_gua({"report", "--db", db(), "--since", "1d", "--format", "json"});
    ASSERT_EQ(j.exit_code, 0) << j.err;
    EXPECT_NEAR(json::parse(j.out)["coverage"]["overlap_seconds"].get<double>(),
                static_cast<double>(rows.reported_us) / 1e6, 1e-3);
    const test::RunResult text = test::run_gua({"report", "--db", db(), "--since", "1d"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("recorded more than once"), std::string::npos) << text.out;
    std::printf(
        "[ overlap  ] two daemons on one database: %zu card-ticks, %lld µs recorded twice\n",
        rows.ticks, static_cast<long long>(rows.total_us));
}

} // namespace
} // namespace gua::e2e::daemon_overlap_test
