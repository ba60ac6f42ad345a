// SPDX-License-Identifier: Apache-2.0
// `gua version`: the commit of the source tree it was built from (asked of git here), the SQLite
// library it runs with (asked of SQLite here) and the driver the fake NVML library plays.
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace gua::version_test { // named after the file: unique in a unity batch

/// The text after `key` on the line of `out` that starts with it ("" when none).
std::string field(const std::string& out, const std::string& key) {
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key + " ", 0) == 0) {
            const std::size_t value = line.find_first_not_of(' ', key.size());
            return value == std::string::npos ? "" : line.substr(value);
        }
    }
    return "";
}

std::string fake_library() {
    const std::string path = std::string(GUA_FAKE_NVML_DIR) + "/libnvidia-ml.so.1";
    return std::filesystem::exists(path) ? path : "";
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) {
        s.pop_back();
    }
    return s;
}

TEST(Version, NamesSqliteAndTheDriverVersion) {
    if (fake_library().empty()) {
        GTEST_SKIP() << "the fake NVML library (tests/fake_nvml) is not built";
    }
    test::TempDir dir;
    std::ofstream(dir.file("scenario.json"))
        << R"({"driver_version": "555.42.06", "devices": [{"name": "NVIDIA L4"}]})";
    const test::RunResult r =
        test::run_gua({"version"}, {{"GUA_NVML_LIBRARY", fake_library()},
                                    {"GUA_FAKE_NVML_SCENARIO", dir.file("scenario.json")}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(field(r.out, "sqlite"), sqlite3_libversion()) << r.out;
    EXPECT_EQ(field(r.out, "nvml"), "driver 555.42.06") << r.out;
    // The first line is what --version prints.
    const test::RunResult flag = test::run_gua({"--version"});
    EXPECT_EQ(r.out.substr(0, r.out.find('\n') + 1), flag.out);
}

TEST(Version, SaysNoDriverWhenNvmlDoesNotLoad) {
    test::TempDir dir;
    const test::RunResult r =
        test::run_gua({"version"}, {{"GUA_NVML_LIBRARY", dir.file("libnvidia-ml.so.1")}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(field(r.out, "nvml").rfind("no driver (", 0), 0U) << r.out;
    EXPECT_EQ(field(r.out, "sqlite"), sqlite3_libversion()) << r.out;
}

TEST(Version, NamesTheCommitOfTheSourceTree) {
    const test::RunResult top =
        test::run("/bin/sh", {"-c", "git -C \"$0\" rev-parse --show-toplevel", GUA_SOURCE_DIR});
    const test::RunResult head =
        test::run("/bin/sh", {"-c", "git -C \"$0\" rev-parse --short=12 HEAD", GUA_SOURCE_DIR});
    const test::RunResult r = test::run_gua({"version"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string commit = field(r.out, "commit");
    std::error_code ec;
    if (top.exit_code != 0 || head.exit_code != 0 ||
        !std::filesystem::equivalent(trimmed(top.out), GUA_SOURCE_DIR, ec)) {
        EXPECT_EQ(commit, "unknown") << r.out;
        return;
    }
    // A checkout with uncommitted changes adds "-dirty"; the binary may predate a new commit
    // only if it was not rebuilt, which the test build always does first.
    EXPECT_TRUE(commit == trimmed(head.out) || commit == trimmed(head.out) + "-dirty") << r.out;
}

} // namespace gua::version_test
