// SPDX-License-Identifier: Apache-2.0
// `gua free` end to end: the real daemon records a scenario on the fake driver with a simulated
// clock (one card idle for the last 5 min, another for 20 min, ghost memory on a third), then
// holds still while `gua free` reads its database; an allocated idle card through the mapping
// directory; NVML sampled when no daemon records; exit codes and usage errors.
#include "e2e/daemon_e2e.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace gua::e2e {
namespace free_e2e_test { // named after the file: unique in a unity batch

constexpr double k_start_s = 600;   // scenario time of the daemon's first poll
constexpr double k_hold_s = 2400;   // the daemon's clock stops here (30 min later)
constexpr double k_interval_s = 30; // the daemon's tick
constexpr double k_edge0_s = 2085;  // GPU 0 busy until here: idle for the last 315 s
constexpr double k_edge1_s = 1185;  // GPU 1 busy until here: idle for the last 1215 s
constexpr double k_total_mib = 81559;
constexpr double k_reserved_mib = 500;
constexpr double k_ghost2_mib = 30000; // memory GPU 2 reports used with no process listed

json card_of(const json& free, int index) {
    for (const json& g : free.at("gpus")) {
        if (g.at("index") == index) {
            return g;
        }
    }
    ADD_FAILURE() << "GPU " << index << " not in " << free.dump(2);
    return json::object();
}

class FreeE2E : public DaemonTest {
  protected:
    /// `sql`'s count on the daemon's database; 0 while it is not there or not migrated yet.
    int count(const std::string& sql) const {
        if (!file_exists(db())) {
            return 0;
        }
        try {
            test::RawDb raw(db());
            const std::string n = raw.one(sql);
            return n.empty() ? 0 : std::stoi(n);
        } catch (const std::exception&) {
            return 0;
        }
    }

    /// Starts the daemon on the scenario with the simulated clock held at k_hold_s and waits
    /// until it has recorded up to there (it then waits, still running, for the hold to lift).
    void record_and_hold() {
        const json devices = json::array(
            {{{"util", {{0, 100}, {k_edge0_s, 0}}}, {"memory_reserved_mib", k_reserved_mib}},
             {{"util", {{0, 100}, {k_edge1_s, 0}}}, {"memory_reserved_mib", k_reserved_mib}},
             {{"util", {{0, 0}}},
              {"memory_reserved_mib", k_reserved_mib},
              {"extra_used_mib", {{0, k_ghost2_mib}}}}});
        write_scenario({{"devices", devices}});
        set_clock(k_start_s);
        write_atomically(path("clock.hold"), std::to_string(k_hold_s));
        set_env("GUA_TEST_CLOCK_FILE", path("clock"));
        m_daemon = start_daemon({"--interval", "30s", "--quiet"});
        const int ticks = static_cast<int>((k_hold_s - k_start_s) / k_interval_s);
        ASSERT_TRUE(test::poll_until(
            [&] {
                return count("SELECT count(*) FROM card_tick c JOIN gpu g ON g.id = c.gpu_id "
                             "WHERE g.idx = 2") >= ticks;
            },
            60s))
            << m_daemon->err();
    }

    test::RunResult free(std::vector<std::string> extra) const {
        std::vector<std::string> args{"free", "--db", db(), "--config", config_path()};
        args.insert(args.end(), extra.begin(), extra.end());
        return test::run_gua(args);
    }

    json free_json(std::vector<std::string> extra, int expected_exit) const {
        extra.insert(extra.end(), {"--format", "json"});
        const test::RunResult r = free(extra);
        EXPECT_EQ(r.exit_code, expected_exit) << r.err;
        return json::parse(r.out);
    }

    std::unique_ptr<test::BackgroundProcess> m_daemon;
};

TEST_F(FreeE2E, OnlyTheCardIdleLongerThanTheWindowIsFree) {
    record_and_hold();
    // GPU 2 is idle throughout but has ghost memory: free by time, and the memory test decides.
    const test::RunResult ten = free({});
    EXPECT_EQ(ten.exit_code, 0) << ten.err;
    EXPECT_EQ(ten.out, "1,2\n");
    const json j = free_json({"--for", "10m"}, 0);
    EXPECT_EQ(j.at("source").at("kind"), "daemon");
    EXPECT_EQ(j.at("free"), json::array({1, 2}));
    EXPECT_DOUBLE_EQ(j.at("for_seconds").get<double>(), 600.0);
    const json g0 = card_of(j, 0);
    EXPECT_FALSE(g0.at("free").get<bool>());
    EXPECT_EQ(g0.at("reason"), "active") << g0.dump();
    // Its truly idle stretch starts at the first tick after the edge: within one tick of it.
    const double idle0 = k_hold_s - k_edge0_s;
    EXPECT_LE(g0.at("truly_idle_seconds").get<double>(), idle0 + 0.5);
    EXPECT_GE(g0.at("truly_idle_seconds").get<double>(), idle0 - k_interval_s - 0.5);
    const json g1 = card_of(j, 1);
    std::cout << "[free] GPU 0 truly idle " << g0.at("truly_idle_seconds") << " s (scenario "
              << idle0 << " s), GPU 1 " << g1.at("truly_idle_seconds") << " s; " << g0.at("detail")
              << "\n";
    EXPECT_TRUE(g1.at("free").get<bool>()) << g1.dump();
    EXPECT_TRUE(g1.at("reason").is_null());
    EXPECT_GE(g1.at("truly_idle_seconds").get<double>(), 600.0);

    // A 4-minute window frees GPU 0 too; a 25-minute one frees GPU 2 alone (idle all along),
    // and GPU 1 is not free: active before its 20 minutes.
    EXPECT_EQ(free_json({"--for", "4m"}, 0).at("free"), json::array({0, 1, 2}));
    const json long_window = free_json({"--for", "25m"}, 0);
    EXPECT_EQ(long_window.at("free"), json::array({2}));
    EXPECT_EQ(card_of(long_window, 1).at("reason"), "active");
    // 40 minutes reach back before the recording: not measured, so not free.
    const json before = free_json({"--for", "40m"}, 1);
    EXPECT_EQ(before.at("free"), json::array());
    EXPECT_EQ(card_of(before, 2).at("reason"), "unmeasured");
}

TEST_F(FreeE2E, ExitCodesCudaValueAndFreeMemory) {
    record_and_hold();
    const test::RunResult cuda = free({"--format", "cuda"});
    EXPECT_EQ(cuda.exit_code, 0) << cuda.err;
    EXPECT_EQ(cuda.out, "CUDA_VISIBLE_DEVICES=1\n") << "the first --count (1) free card";
    const test::RunResult two = free({"--format", "cuda", "--count", "2"});
    EXPECT_EQ(two.exit_code, 0) << two.err;
    EXPECT_EQ(two.out, "CUDA_VISIBLE_DEVICES=1,2\n");
    const test::RunResult three = free({"--format", "cuda", "--count", "3"});
    EXPECT_EQ(three.exit_code, 1);
    EXPECT_EQ(three.out, "");
    EXPECT_EQ(three.err, "gua: 2 of 3 GPUs truly idle for the last 10m, 3 needed\n");

    // Free memory: the card's total less what it reports used and reserved.
    const double free1 = k_total_mib - k_reserved_mib;
    const double free2 = k_total_mib - k_reserved_mib - k_ghost2_mib;
    const json j = free_json({}, 0);
    EXPECT_EQ(card_of(j, 1).at("memory_free_mib").get<double>(), free1);
    EXPECT_EQ(card_of(j, 2).at("memory_free_mib").get<double>(), free2);
    // 40 GiB: GPU 1 has it, GPU 2 (about 50 GiB free) too; 60 GiB: only GPU 1.
    EXPECT_EQ(free_json({"--min-memory", "40GiB"}, 0).at("free"), json::array({1, 2}));
    const json big = free_json({"--min-memory", "60GiB", "--count", "2"}, 1);
    EXPECT_EQ(big.at("free"), json::array({1}));
    EXPECT_EQ(card_of(big, 2).at("reason"), "memory");
    EXPECT_GE(free2, 40 * 1024.0);
    EXPECT_LT(free2, 60 * 1024.0);
    EXPECT_GE(free1, 60 * 1024.0);
    const test::RunResult none = free({"--min-memory", "100GiB"});
    EXPECT_EQ(none.exit_code, 1);
    EXPECT_EQ(none.out, "");
    EXPECT_EQ(std::count(none.err.begin(), none.err.end(), '\n'), 1) << none.err;
}

// Real time: two idle cards, one allocated to a Slurm job through the mapping directory.
TEST_F(FreeE2E, AnAllocatedIdleCardIsNotFree) {
    write_scenario({{"devices", {{{"util", {{0, 0}}}}, {{"util", {{0, 0}}}}}}});
    const std::string jobs = path("jobs");
    std::filesystem::create_directories(jobs + "/.gua-owners");
    write_atomically(jobs + "/.gua-owners/77", "user=alice\naccount=physics\n");
    write_atomically(jobs + "/0", "77\n");
    auto daemon = start_daemon({"--interval", "500ms", "--quiet", "--allocation-dir", jobs});
    // Six ticks after the first one that knew the allocation: 3 s of known allocation.
    ASSERT_TRUE(test::poll_until(
        [&] { return count("SELECT count(*) FROM card_tick WHERE allocated_us > 0") >= 6; }, 20s))
        << daemon->err();
    const json j = free_json({"--for", "2s"}, 0);
    EXPECT_EQ(j.at("free"), json::array({1}));
    const json g0 = card_of(j, 0);
    EXPECT_EQ(g0.at("reason"), "allocated") << g0.dump();
    EXPECT_EQ(g0.at("detail"), "allocated to slurm-job 77 (alice)");
    const test::RunResult both = free({"--for", "2s", "--count", "2"});
    EXPECT_EQ(both.exit_code, 1);
    EXPECT_EQ(both.out, "1\n");
}

TEST_F(FreeE2E, WithoutADaemonOnlyTheSampleIsMeasured) {
    write_scenario({{"devices", {{{"util", {{0, 0}}}}, {{"util", {{0, 100}}}}}}});
    const std::map<std::string, std::string> env{{"GUA_FAKE_NVML_SCENARIO", scenario_path()}};
    const std::vector<std::string> base{"free",         "--db",        path("none.db"),
                                        "--config",     config_path(), "--nvml-library",
                                        fake_library(), "--sample",    "1s"};
    auto args = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = base;
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    };
    const test::RunResult now = test::run_gua(args({"--for", "0", "--format", "cuda"}), env);
    EXPECT_EQ(now.exit_code, 0) << now.err;
    EXPECT_EQ(now.out, "CUDA_VISIBLE_DEVICES=0\n");
    // Ten minutes cannot be answered from a one-second sample: nothing is free.
    const test::RunResult ten = test::run_gua(args({"--format", "json"}), env);
    EXPECT_EQ(ten.exit_code, 1) << ten.err;
    const json j = json::parse(ten.out);
    EXPECT_EQ(j.at("source").at("kind"), "sampled");
    EXPECT_EQ(card_of(j, 0).at("reason"), "unmeasured");
    EXPECT_EQ(card_of(j, 1).at("reason"), "active");
    EXPECT_NE(ten.err.find("no daemon is recording"), std::string::npos) << ten.err;
}

TEST_F(FreeE2E, BadInputIsOneLineAndExitCodeTwo) {
    for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
             {"--for", "5x"}, {"--count", "0"}, {"--min-memory", "lots"}, {"--format", "xml"}}) {
        const test::RunResult r = free(bad);
        EXPECT_EQ(r.exit_code, 2) << bad[0] << ": " << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_EQ(r.out, "");
    }
}

} // namespace free_e2e_test
} // namespace gua::e2e
