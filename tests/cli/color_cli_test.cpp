// SPDX-License-Identifier: Apache-2.0
// `--color auto|always|never` of `gua now` (and `gua top`, which shares the flag) and of the text
// report (`gua report`, `gua demo`): auto colours a terminal only and never under NO_COLOR; always
// and never are what they say.
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

namespace gua {
namespace color_cli_test {

/// `gua now` sampling the fake NVML (one idle card) with `color`, under `env`.
test::RunResult now_with(const std::string& color, std::map<std::string, std::string> env) {
    test::TempDir dir;
    std::ofstream(dir.file("scenario.json")) << R"({"devices": [{"util": [[0, 5]]}]})";
    env["GUA_FAKE_NVML_SCENARIO"] = dir.file("scenario.json");
    std::vector<std::string> args{"now",
                                  "--db",
                                  dir.file("none.db"),
                                  "--sample",
                                  "300ms",
                                  "--nvml-library",
                                  std::string(GUA_FAKE_NVML_DIR) + "/libnvidia-ml.so.1"};
    if (!color.empty()) {
        args.insert(args.end(), {"--color", color});
    }
    return test::run_gua(args, env);
}

bool has_ansi(const std::string& text) {
    return text.find("\x1b[") != std::string::npos;
}

TEST(ColorCli, AlwaysNeverAndAutoWithNoColor) {
    const test::RunResult always = now_with("always", {{"NO_COLOR", "1"}});
    ASSERT_EQ(always.exit_code, 0) << always.err;
    EXPECT_TRUE(has_ansi(always.out)) << "an explicit --color always overrides NO_COLOR";
    const test::RunResult never = now_with("never", {{"NO_COLOR", ""}});
    ASSERT_EQ(never.exit_code, 0) << never.err;
    EXPECT_FALSE(has_ansi(never.out));
    // auto: stdout is a pipe here, and NO_COLOR is set: no colours either way.
    const test::RunResult automatic = now_with("", {{"NO_COLOR", "1"}});
    ASSERT_EQ(automatic.exit_code, 0) << automatic.err;
    EXPECT_FALSE(has_ansi(automatic.out));
    EXPECT_EQ(now_with("sometimes", {}).exit_code, 2);
}

TEST(ColorCli, ReportTextTakesTheSameFlag) {
    const auto demo = [](const std::string& color) {
        return test::run_gua(
            {"demo", "--ticks", "20", "-q", "--color", color, "--start", "2026-05-01T00:00:00Z"},
            {{"NO_COLOR", "1"}});
    };
    const test::RunResult always = demo("always");
    ASSERT_EQ(always.exit_code, 0) << always.err;
    EXPECT_TRUE(has_ansi(always.out));
    const test::RunResult automatic = demo("auto");
    ASSERT_EQ(automatic.exit_code, 0) << automatic.err;
    EXPECT_FALSE(has_ansi(automatic.out));
}

} // namespace color_cli_test
} // namespace gua
