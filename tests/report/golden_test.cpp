// SPDX-License-Identifier: Apache-2.0
// Golden files: `gua demo` text and JSON reports of every synthetic workload, byte for byte.
// GUA_UPDATE_GOLDEN=1 rewrites tests/golden/ instead of comparing (see tests/golden/README.md).
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace gua::report {
namespace {

struct Workload {
    std::string name;
    std::vector<std::string> extra; ///< flags beyond the defaults (kept fast under ASan)
};

const std::vector<Workload> k_workloads{
    {"classic", {}},
    {"bursty", {}},
    // The default week of 10-minute ticks takes ~40 s under ASan; 12 hours (Monday 10:00–22:00)
    // still shows office hours and an evening of memory held idle.
    {"overnight", {"--ticks", "72"}},
    {"cotenants", {}},
};

bool updating() {
    const char* v = std::getenv("GUA_UPDATE_GOLDEN");
    return v != nullptr && std::string(v) == "1";
}

/// The JSON report without its "gua_version" line, so version bumps do not touch the goldens.
std::string without_version(const std::string& json) {
    static const std::regex k_line("\n  \"gua_version\": \"[^\"]*\",");
    return std::regex_replace(json, k_line, "");
}

/// Where the two texts first differ, for a readable failure.
std::string first_difference(const std::string& expected, const std::string& actual) {
    std::istringstream e(expected);
    std::istringstream a(actual);
    std::string el;
    std::string al;
    for (int line = 1;; ++line) {
        const bool have_e = static_cast<bool>(std::getline(e, el));
        const bool have_a = static_cast<bool>(std::getline(a, al));
        if (!have_e && !have_a) {
            return "texts differ only in their final newline";
        }
        if (!have_e || !have_a || el != al) {
            return "line " + std::to_string(line) + "\n  golden: " + (have_e ? el : "<end>") +
                   "\n  actual: " + (have_a ? al : "<end>");
        }
    }
}

std::string demo(const Workload& w, const std::string& db, const std::string& format) {
    std::vector<std::string> args{
        "demo", "--workload", w.name,    "--start",  "2026-01-05T10:00:00Z",
        "--db", db,           "--quiet", "--format", format};
    args.insert(args.end(), w.extra.begin(), w.extra.end());
    const test::RunResult r = test::run_gua(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    return r.out;
}

void check(const std::string& golden_path, const std::string& actual) {
    if (updating()) {
        std::ofstream(golden_path, std::ios::binary) << actual;
        std::cout << "updated " << golden_path << "\n";
        return;
    }
    const std::string expected = test::read_text(golden_path);
    ASSERT_FALSE(expected.empty()) << golden_path << " is missing; run with GUA_UPDATE_GOLDEN=1";
    EXPECT_TRUE(expected == actual)
        << golden_path << " differs at " << first_difference(expected, actual);
}

class Golden : public ::testing::TestWithParam<Workload> {};

TEST_P(Golden, DemoTextAndJson) {
    const Workload& w = GetParam();
    const test::TempDir dir;
    const std::string base = std::string(GUA_GOLDEN_DIR) + "/demo-" + w.name;
    check(base + ".txt", demo(w, dir.file("text.db"), "text"));
    const std::string json = demo(w, dir.file("json.db"), "json");
    EXPECT_NE(json.find("\"gua_version\""), std::string::npos);
    check(base + ".json", without_version(json));
}

INSTANTIATE_TEST_SUITE_P(Workloads, Golden, ::testing::ValuesIn(k_workloads),
                         [](const ::testing::TestParamInfo<Workload>& param_info) {
                             return param_info.param.name;
                         });

} // namespace
} // namespace gua::report
