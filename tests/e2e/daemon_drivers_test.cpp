// SPDX-License-Identifier: Apache-2.0
// End to end: the daemon records correctly through each build of the fake driver — modern, the R535
// one whose _v3 process lists have a 32-byte stride, and a v1-only (pre-R450) one.
#include "e2e/daemon_e2e.hpp"
#include "identity/child_process.hpp"

#include <pwd.h>
#include <set>
#include <tuple>
#include <unistd.h>

namespace gua::e2e {
namespace {

using identity::testing::ChildProcess;

struct DriverCase {
    const char* name;
    FakeVariant variant;
    const char* driver_version;
    int util_source; ///< 1 snapshot, 2 sample buffer
    bool process_util;
};

void PrintTo(const DriverCase& c, std::ostream* os) {
    *os << c.name;
}

class DaemonE2EDrivers : public DaemonTest, public ::testing::WithParamInterface<DriverCase> {};

// Two cards with two processes each, so that a wrong process-entry stride would shift pids and
// memory of the second entry. The pids are real processes, so identities resolve too.
TEST_P(DaemonE2EDrivers, RecordsCardsProcessesAndStates) {
    const DriverCase& c = GetParam();
    std::vector<std::unique_ptr<ChildProcess>> children;
    for (int i = 0; i < 4; ++i) {
        children.push_back(
            std::make_unique<ChildProcess>(std::vector<std::string>{"/usr/bin/sleep", "60"}));
        ASSERT_GT(children.back()->pid(), 0);
        ASSERT_TRUE(children.back()->wait_for_comm("sleep"));
    }
    const auto pid = [&](int i) {
        return static_cast<int>(children[static_cast<std::size_t>(i)]->pid());
    };
    write_scenario(
        {{"devices",
          {{{"name", "NVIDIA A100-SXM4-40GB"}, {"memory_total_mib", 40960}, {"util", {{0, 80}}}},
           {{"name", "NVIDIA A100-SXM4-40GB"}, {"memory_total_mib", 40960}, {"util", {{0, 2}}}}}},
         {"processes",
          {holder(0, 8000, 60, pid(0)), holder(0, 3000, 20, pid(1)), holder(1, 5000, 0, pid(2)),
           holder(1, 1000, 0, pid(3))}}});
    const test::RunResult r = run_daemon({"--interval", "250ms", "--ticks", "3"}, c.variant);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(std::string("driver=") + c.driver_version + " gpus=2"), std::string::npos)
        << r.err;

    const std::string me = getpwuid(getuid())->pw_name;
    test::RawDb raw(db());
    EXPECT_EQ(raw.one("SELECT driver_version FROM run"), c.driver_version);
    EXPECT_EQ(raw.one("SELECT group_concat(name || '/' || memory_total_mib, ',') FROM gpu"),
              "NVIDIA A100-SXM4-40GB/40960,NVIDIA A100-SXM4-40GB/40960");
    EXPECT_EQ(raw.one("SELECT count(*) FROM card_tick"), "6");
    // Sample-ring ticks may be partial (util_source 3) only with unmeasured time to show for it.
    EXPECT_EQ(raw.one("SELECT count(*) FROM card_tick WHERE util_source = " +
                      std::to_string(c.util_source) + " OR (" + std::to_string(c.util_source) +
                      " = 2 AND util_source = 3 AND unmeasured_us > 0)"),
              "6");
    // Every tick lists exactly the four processes with their own memory.
    std::set<std::tuple<std::string, std::string, std::string>> seen;
    for (const auto& row : raw.rows("SELECT gpu, pid, mem_used_mib, user, command, sm_util_pct "
                                    "FROM process_tick")) {
        seen.emplace(row.at("gpu"), row.at("pid"), row.at("mem_used_mib"));
        EXPECT_EQ(row.at("command"), "sleep");
        EXPECT_EQ(row.at("user"), me);
        EXPECT_EQ(row.at("sm_util_pct") != "NULL", c.process_util) << row.at("sm_util_pct");
    }
    const std::set<std::tuple<std::string, std::string, std::string>> want = {
        {"0", std::to_string(pid(0)), "8000"},
        {"0", std::to_string(pid(1)), "3000"},
        {"1", std::to_string(pid(2)), "5000"},
        {"1", std::to_string(pid(3)), "1000"}};
    EXPECT_EQ(seen, want);
    EXPECT_EQ(raw.one("SELECT count(*) FROM proc_tick"), "12");
    EXPECT_EQ(raw.one("SELECT group_concat(m) FROM (SELECT DISTINCT gpu, mem_used_mib AS m FROM "
                      "card_tick_state ORDER BY gpu)"),
              "11000,6000");

    const json rep = report();
    // All measured time is active on GPU 0 and idle-held on GPU 1; a tick's end that found its
    // ring period still running (a slow, loaded run) is unmeasured, never another state.
    for (int gpu = 0; gpu < 2; ++gpu) {
        EXPECT_GT(measured_seconds(gpu), recorded_seconds(gpu) / 2) << gpu;
        EXPECT_NEAR(gpu_row(rep, gpu)["states"]["unmeasured"].get<double>(),
                    1.0 - measured_seconds(gpu) / recorded_seconds(gpu), 1e-6);
    }
    EXPECT_NEAR(gpu_row(rep, 0)["states"]["active"].get<double>(),
                measured_seconds(0) / recorded_seconds(0), 1e-6);
    EXPECT_NEAR(gpu_row(rep, 1)["states"]["idle_held"].get<double>(),
                measured_seconds(1) / recorded_seconds(1), 1e-6);
    EXPECT_NEAR(seconds(identity_row(rep, me)["gpu_hours"]),
                measured_seconds(0) + measured_seconds(1), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(
    Variants, DaemonE2EDrivers,
    ::testing::Values(DriverCase{"Modern", FakeVariant::modern, "560.35.05", 2, true},
                      DriverCase{"R535Stride32", FakeVariant::r535, "535.54.03", 2, true},
                      DriverCase{"V1Only", FakeVariant::v1, "418.226.00", 1, false}),
    [](const ::testing::TestParamInfo<DriverCase>& param_info) {
        return std::string(param_info.param.name);
    });

} // namespace
} // namespace gua::e2e
