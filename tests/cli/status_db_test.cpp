// SPDX-License-Identifier: Apache-2.0
// `gua status` summarizes the database named by --db or $GUA_DB (not only the default one).
#include "../store/temp_db.hpp"
#include "store/writer.hpp"
#include "support/run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>

namespace gua {
namespace {

/// A database holding 3 one-second ticks of one card "NVIDIA Status Test".
void record(store::Database& db) {
    const TimeUs start = 1777593600LL * k_us_per_second;
    store::Writer w(db, store::RunInfo{"statushost", "560", "nvml", k_us_per_second, 10.0, start});
    for (std::uint64_t i = 0; i < 3; ++i) {
        telemetry::Tick t;
        t.seq = i;
        t.t0 = start + static_cast<TimeUs>(i) * k_us_per_second;
        t.duration_us = k_us_per_second;
        telemetry::CardTickRecord c;
        c.device.uuid = "GPU-57a7u500-aaaa-bbbb-cccc-0123456789ab";
        c.device.name = "NVIDIA Status Test";
        c.util_source = telemetry::UtilSource::samples;
        c.active_us = 0;
        t.cards.push_back(c);
        w.write(t);
    }
    w.finish(start + 3 * k_us_per_second);
}

/// `gua status --format json` in a clean XDG tree (no daemon, no default database).
test::RunResult status(const testing::TempDir& dir, const std::vector<std::string>& extra,
                       const std::map<std::string, std::string>& env) {
    std::vector<std::string> args{"status", "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::map<std::string, std::string> e{{"XDG_STATE_HOME", dir.file("state")},
                                         {"XDG_CONFIG_HOME", dir.file("config")},
                                         {"XDG_RUNTIME_DIR", dir.file("run")},
                                         {"GUA_DB", ""}};
    for (const auto& [k, v] : env) {
        e[k] = v;
    }
    return test::run(GUA_BINARY, args, e);
}

TEST(StatusDb, DbFlagAndEnvironmentNameTheDatabase) {
    testing::TempDb t;
    record(t.db);
    for (const bool by_flag : {true, false}) {
        const test::RunResult r =
            by_flag ? status(t.dir, {"--db", t.path}, {}) : status(t.dir, {}, {{"GUA_DB", t.path}});
        const nlohmann::json j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["database"]["path"], t.path) << r.out << r.err;
        EXPECT_EQ(j["database"]["exists"], true);
        ASSERT_EQ(j["database"]["gpus"].size(), 1U) << r.out;
        EXPECT_EQ(j["database"]["gpus"][0]["name"], "NVIDIA Status Test");
    }
}

TEST(StatusDb, MissingDbFlagIsAUsageError) {
    testing::TempDir dir;
    const test::RunResult r = status(dir, {"--db", dir.file("nope.db")}, {});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("nope.db: no such database"), std::string::npos) << r.err;
}

TEST(StatusDb, DbStatsPrintsSizesInBinaryUnits) {
    testing::TempDb t;
    record(t.db);
    const test::RunResult r = test::run(GUA_BINARY, {"db", "stats", "--db", t.path}, {});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The file is whole pages: "size         N KiB (P pages of S B, ...)", N = P * S / 1024.
    const std::size_t at = r.out.find("size ");
    ASSERT_NE(at, std::string::npos) << r.out;
    unsigned long long pages = 0;
    unsigned long long page_size = 0;
    char unit[8] = {};
    double shown = 0;
    ASSERT_EQ(std::sscanf(r.out.c_str() + at, "size %lf %7s (%llu pages of %llu B", &shown, unit,
                          &pages, &page_size),
              4)
        << r.out;
    EXPECT_STREQ(unit, "KiB") << r.out;
    EXPECT_NEAR(shown, static_cast<double>(pages * page_size) / 1024.0, 0.05) << r.out;
    for (const char* decimal : {" kB", " MB", " GB"}) {
        EXPECT_EQ(r.out.find(decimal), std::string::npos) << decimal << "\n" << r.out;
    }
}

} // namespace
} // namespace gua
