// SPDX-License-Identifier: Apache-2.0
// A process name a GPU user chooses (invalid UTF-8 and a terminal escape) through the real
// daemon and every output: `gua now` and `gua report` in JSON stay valid and exit 0, text shows
// the bytes escaped, CSV and HTML carry no control character.
#include "e2e/policy_harness.hpp"
#include "support/run.hpp"

#include <gtest/gtest.h>

namespace gua::policy_e2e {
namespace hostile_names_e2e_test {

using namespace std::chrono_literals;
using nlohmann::json;

const std::string k_name = "tr\xff\xfe\x1b[2Jx"; // /proc/<pid>/comm: at most 15 bytes

bool has_escape(const std::string& s) {
    return s.find('\x1b') != std::string::npos || s.find('\xff') != std::string::npos;
}

TEST(HostileNamesE2E, AProcessNameAUserChoseReachesNoOutputRaw) {
    GUA_REQUIRE_ROOT();
    Scene s;
    auto user = start_as(1500, s.sleep_named(k_name), {"60"});
    ASSERT_TRUE(wait_for_comm(user->pid(), k_name));
    s.hold(user->pid(), 4096);
    s.write("");
    auto daemon = s.start_daemon();
    ASSERT_TRUE(eventually([&] { return s.scalar("SELECT count(*) FROM card_tick") >= 6; }, 20s));

    const test::RunResult now = test::run_gua({"now", "--db", s.db(), "--format", "json"});
    ASSERT_EQ(now.exit_code, 0) << now.err;
    const json j = json::parse(now.out);
    bool found = false;
    for (const json& h : j.at("holders")) {
        if (h.at("pid") == user->pid()) {
            EXPECT_EQ(h.at("command"), "tr\xef\xbf\xbd\xef\xbf\xbd\x1b[2Jx");
            found = true;
        }
    }
    EXPECT_TRUE(found) << now.out;
    const test::RunResult now_text = test::run_gua({"now", "--db", s.db()});
    ASSERT_EQ(now_text.exit_code, 0) << now_text.err;
    EXPECT_FALSE(has_escape(now_text.out)) << now_text.out;

    for (const std::vector<std::string>& format : {std::vector<std::string>{"--format", "json"},
                                                   {"--format", "text"},
                                                   {"--format", "html"},
                                                   {"--format", "csv", "--table", "identities"}}) {
        std::vector<std::string> args{"report", "--db", s.db(), "--since", "1h"};
        args.insert(args.end(), format.begin(), format.end());
        const test::RunResult r = test::run_gua(args);
        ASSERT_EQ(r.exit_code, 0) << format[1] << ": " << r.err;
        EXPECT_FALSE(has_escape(r.out)) << format[1] << ": " << r.out;
        if (format[1] == "json") {
            EXPECT_TRUE(json::accept(r.out));
        }
    }
    Scene::stop_daemon(*daemon);
}

} // namespace hostile_names_e2e_test
} // namespace gua::policy_e2e
