// packaging/gua-rules.yml: promtool accepts the rules and their unit tests pass.
#include "fleet/prometheus_server.hpp"
#include "support/run.hpp"

#include <gtest/gtest.h>

namespace gua::fleet_testing {
namespace {

TEST(FleetRules, PromtoolChecksAndTestsTheShippedRules) {
    if (access(k_promtool, X_OK) != 0) {
        GTEST_SKIP() << "promtool not installed (scripts/install-deps.sh --test)";
    }
    const std::string dir = std::string(GUA_SOURCE_DIR) + "/packaging/";
    const test::RunResult check = test::run(k_promtool, {"check", "rules", dir + "gua-rules.yml"});
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
    const test::RunResult unit =
        test::run(k_promtool, {"test", "rules", dir + "gua-rules.test.yml"});
    EXPECT_EQ(unit.exit_code, 0) << unit.out << unit.err;
}

} // namespace
} // namespace gua::fleet_testing
