// packaging/gua-rules.yml: promtool accepts the rules and their unit tests pass.
#include "fleet/prometheus_server.hpp"

#include <gtest/gtest.h>

namespace gua::fleet_testing {
namespace {

TEST(FleetRules, PromtoolChecksAndTestsTheShippedRules) {
    if (access(k_promtool, X_OK) != 0) {
        GTEST_SKIP() << "promtool not installed (scripts/install-deps.sh --test)";
    }
    const std::string dir = std::string(GUA_SOURCE_DIR) + "/packaging/";
    const std::string out = (std::filesystem::temp_directory_path() / "gua-rules.out").string();
    const auto [check, check_out] =
        run_capture({k_promtool, "check", "rules", dir + "gua-rules.yml"}, out, out + ".err");
    EXPECT_EQ(check, 0) << check_out << read_file(out + ".err");
    const auto [test, test_out] =
        run_capture({k_promtool, "test", "rules", dir + "gua-rules.test.yml"}, out, out + ".err");
    EXPECT_EQ(test, 0) << test_out << read_file(out + ".err");
}

} // namespace
} // namespace gua::fleet_testing
