// SPDX-License-Identifier: Apache-2.0
// The real binary answers bad input with one short line on stderr and exit code 2, before it
// reads or creates anything.
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace gua {
namespace {

struct BadInput {
    std::vector<std::string> args;
    std::string expected; ///< a part of the one-line message
};

class InputValidation : public ::testing::TestWithParam<BadInput> {};

TEST_P(InputValidation, OneShortLineAndExitTwo) {
    test::TempDir dir;
    const std::string db = dir.file("gua.db");
    std::vector<std::string> args = GetParam().args;
    for (std::string& a : args) {
        if (a == "@DB") {
            a = db;
        }
    }
    const test::RunResult r = test::run_gua(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_LT(r.err.size(), 200U) << r.err;
    EXPECT_NE(r.err.find(GetParam().expected), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_FALSE(std::filesystem::exists(db)) << "a rejected command created the database";
}

INSTANTIATE_TEST_SUITE_P(
    Cli, InputValidation,
    ::testing::Values(
        BadInput{{"frobnicate"}, "unknown command 'frobnicate'"},
        BadInput{{"top", "--db", "@DB", "--history", "5s"},
                 "--history: must be between 10s and 24h"},
        BadInput{{"now", "--db", "@DB", "--history", "2d"},
                 "--history: must be between 10s and 24h"},
        BadInput{{"top", "--db", "@DB", "--history", "10"}, "--history: "},
        BadInput{{"reprot", "--since", "1d"}, "did you mean `gua report`?"},
        BadInput{{"\x1b[2J"}, "unknown command '\\x1b[2J'"},
        BadInput{{"report", "--db", "@DB", "--price", "-1"}, "price per GPU-hour from 0 to 1000"},
        BadInput{{"report", "--db", "@DB", "--price", "nan"}, "price per GPU-hour from 0 to 1000"},
        BadInput{{"report", "--db", "@DB", "--price", "1e300"}, "price per GPU-hour"},
        BadInput{{"report", "--db", "@DB", "--tz", ""}, "must not be empty"},
        BadInput{{"report", "--db", "@DB", "--gpu", ""}, "must not be empty"},
        BadInput{{"report", "--db", "@DB", "--user", ""}, "must not be empty"},
        BadInput{{"report", "--db", ""}, "must not be empty"},
        BadInput{{"report", "--db", "@DB", "--from", "2026-05-01", "--since", "2d"}, "excludes"},
        BadInput{{"report", "--db", "@DB", "--to", "2026-05-01", "--until", "2d"}, "excludes"},
        BadInput{{"report", "--db", "@DB", "--from", "2026-05-01T00:00+25:00"}, "--from"},
        BadInput{{"report", "--db", "@DB", "--config", "/tmp"}, "is a directory"},
        BadInput{{"daemon", "--db", "@DB", "--price-per-gpu-hour", "nan"}, "price per GPU-hour"},
        BadInput{{"daemon", "--db", "@DB", "--price-per-gpu-hour", "-1"}, "price per GPU-hour"},
        BadInput{{"daemon", "--db", "@DB", "--price-per-gpu-hour", "1e300"}, "price per GPU-hour"},
        BadInput{{"daemon", "--db", "@DB", "--listen", ""}, "must not be empty"},
        BadInput{{"report", "--prometheus", ""}, "must not be empty"},
        BadInput{{"report", "--prometheus", "http://127.0.0.1:9", "--host-label", "host-name"},
                 "expected a Prometheus label name"},
        BadInput{{"report", "--prometheus", "http://127.0.0.1:9", "--host-label", "__name__"},
                 "expected a Prometheus label name"},
        BadInput{{"report", "--prometheus", "http://127.0.0.1:9", "--host-label", ""},
                 "expected a Prometheus label name"},
        // Unknown options get the closest option of their command.
        BadInput{{"report", "--db", "@DB", "--sinse", "1d"}, "did you mean --since?"},
        BadInput{{"status", "--fromat", "json"}, "did you mean --format?"},
        BadInput{{"db", "upgrade", "--db", "@DB", "--confg", "x.toml"}, "did you mean --config?"},
        // Usage errors come before the database is looked for: exit 2 whether one exists or not.
        BadInput{{"report", "--since", "soon"}, "--since"},
        BadInput{{"report", "--format", "csv"}, "--format csv needs --table"}));

TEST(InputValidation, AnAmbiguousGpuPrefixNamesTheCardsItMatches) {
    test::TempDir dir;
    const std::string db = dir.file("demo.db");
    ASSERT_EQ(test::run_gua({"demo", "--db", db, "--quiet", "--format", "json"}).exit_code, 0);
    const test::RunResult r =
        test::run_gua({"report", "--db", db, "--since", "30d", "--gpu", "GPU-"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("--gpu GPU-: ambiguous"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("GPU-0a7c3e1f"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("GPU-1a7c3e1f"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
    const test::RunResult one =
        test::run_gua({"report", "--db", db, "--since", "30d", "--gpu", "GPU-1a"});
    EXPECT_EQ(one.exit_code, 0) << one.err;
    EXPECT_NE(one.out.find("[gpu=GPU-1a]"), std::string::npos) << one.out;
}

TEST(InputValidation, ControlCharactersInArgumentsAreEscaped) {
    const test::RunResult r = test::run_gua({"report", "--format", "\x1b]52;c;aGk=\a"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\a'), std::string::npos) << r.err;
}

} // namespace
} // namespace gua
