// SPDX-License-Identifier: Apache-2.0
// packaging/gua-rules.yml and gua-alerts.yml: promtool accepts the rules and their unit tests
// (packaging/*.test.yml) pass.
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

// The health alerts (memory near full, thermal throttling, ghost memory, ECC errors, a pending
// row remap, a hardware/driver/interconnect Xid, idle-held longer than 2 h) and the daemon alerts
// (down, absent, not ticking even once its series are stale, write errors): each fires on the
// card or daemon that crosses its threshold for its duration and on no other
// (packaging/gua-alerts.test.yml).
TEST(FleetRules, PromtoolChecksAndTestsTheShippedHealthAlerts) {
    if (access(k_promtool, X_OK) != 0) {
        GTEST_SKIP() << "promtool not installed (Debian package prometheus; "
                        "scripts/install-deps.sh --test): the alert rules are not tested";
    }
    const std::string dir = std::string(GUA_SOURCE_DIR) + "/packaging/";
    const test::RunResult check = test::run(k_promtool, {"check", "rules", dir + "gua-alerts.yml"});
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
    EXPECT_NE(check.out.find("14 rules found"), std::string::npos) << check.out;
    const test::RunResult unit =
        test::run(k_promtool, {"test", "rules", dir + "gua-alerts.test.yml"});
    EXPECT_EQ(unit.exit_code, 0) << unit.out << unit.err;
}

} // namespace
} // namespace gua::fleet_testing
