// SPDX-License-Identifier: Apache-2.0
// Ground truth end to end: idle-held vs truly idle, and who is charged for it, decided poll by
// poll — short holders, memory around the held threshold, holders taking turns, a job that ends
// early, an MPS server next to its client — through the real daemon on the fake driver at 1 s
// and 30 s, held to the scenario's integrated truth (truth_harness.hpp). Changes of who holds
// what fall 50 ms after a poll (a process listed at a poll is taken as present since the previous
// one), so the poll grid places them within 50 ms.
#include "e2e/truth_harness.hpp"

namespace gua::e2e {
namespace truth_held_test { // named after the file: unique in a unity batch

constexpr std::uint32_t k_uid_a = 1500;
constexpr std::uint32_t k_uid_b = 1501;
constexpr double k_period = 30; ///< every pattern below repeats every 30 s of scenario time
constexpr double k_start = 600; ///< scenario time of the daemon's first poll
constexpr double k_late = 0.05; ///< how long after a poll a change happens

json steady(double value) {
    return json::array({json::array({0.0, value})});
}

/// A process of `who` (a real sleeper named by `pid_env`) alive on [start, end).
json proc(const std::string& pid_env, const std::string& who, const json& memory_mib,
          double start = 0, double end = 1e6, const std::string& type = "compute",
          const json& sm_util = steady(0)) {
    return {{"device", 0},
            {"pid_env", pid_env},
            {"who", who},
            {"type", type},
            {"start", start},
            {"end", end},
            {"memory_mib", memory_mib},
            {"sm_util", sm_util}};
}

/// Processes of `who` alive on [from, to) of every period.
json windows(const std::string& pid_env, const std::string& who, double mib, double from, double to,
             const std::string& type = "compute", const json& sm_util = steady(0)) {
    json out = json::array();
    for (double p = k_start - k_period; p < k_start + 1300; p += k_period) {
        out.push_back(proc(pid_env, who, steady(mib), p + from, p + to, type, sm_util));
    }
    return out;
}

/// `a` during [from, to) of every period, `b` otherwise.
json periodic(double from, double to, double a, double b) {
    json points = json::array({json::array({0.0, b})});
    for (double p = k_start - k_period; p < k_start + 1300; p += k_period) {
        points.push_back({p + from, a});
        points.push_back({p + to, b});
    }
    return points;
}

json concat(json a, const json& b) {
    for (const json& x : b) {
        a.push_back(x);
    }
    return a;
}

class TruthHeld : public TruthTest, public ::testing::WithParamInterface<double> {
  protected:
    TruthRun run_spec() const {
        TruthRun r;
        r.interval_s = GetParam();
        r.ticks = GetParam() >= 30 ? 20 : 60;
        r.start_s = k_start;
        return r;
    }
    std::string label() const { return fmt::format("{}s", GetParam()); }
    std::string a() { return user_label(k_uid_a); }
    std::string b() { return user_label(k_uid_b); }
    static json card(const json& util = steady(0)) {
        return json::array(
            {{{"uuid", "GPU-7e570000-0000-0000-0000-000000000000"}, {"util", util}}});
    }
};

// A 20 GiB holder that exits 10 s into each 30 s period: idle-held a third of the time, not all
// of it (the tick's largest memory made every 30 s tick idle-held).
TEST_P(TruthHeld, AShortHolderExitingEarly) {
    spawn_sleeper(k_uid_a, "GUA_TRUTH_A");
    const json scenario = {{"devices", card()},
                           {"processes", windows("GUA_TRUTH_A", a(), 20480, k_late, 10 + k_late)}};
    check(run_truth(scenario, run_spec()), "short holder " + label());
}

// One process whose memory hovers around the 100 MiB threshold: above it 5 s of every 15 s.
TEST_P(TruthHeld, MemoryHoveringAroundTheThreshold) {
    spawn_sleeper(k_uid_a, "GUA_TRUTH_A");
    json memory = json::array({json::array({0.0, 90})});
    for (double t = k_start - k_period; t < k_start + 1300; t += 15) {
        memory.push_back({t + k_late, 120});
        memory.push_back({t + 5 + k_late, 95});
        memory.push_back({t + 10 + k_late, 60});
    }
    const json scenario = {{"devices", card()},
                           {"processes", json::array({proc("GUA_TRUTH_A", a(), memory)})}};
    check(run_truth(scenario, run_spec()), "hovering memory " + label());
}

// Two 60 MiB holders taking turns, never together: each below the threshold, the card never held.
TEST_P(TruthHeld, HoldersTakingTurns) {
    spawn_sleeper(k_uid_a, "GUA_TRUTH_A");
    spawn_sleeper(k_uid_b, "GUA_TRUTH_B");
    const json scenario = {
        {"devices", card()},
        {"processes", concat(windows("GUA_TRUTH_A", a(), 60, 2 * k_late, 15 + k_late),
                             windows("GUA_TRUTH_B", b(), 60, 15 + 2 * k_late, 30 + k_late))}};
    check(run_truth(scenario, run_spec()), "turns " + label());
}

// A's 5 s job ends early in each period while B holds the card all along: A is charged for the
// 5 s it shared (half of it by memory), B for the rest.
TEST_P(TruthHeld, AJobThatEndsEarly) {
    spawn_sleeper(k_uid_a, "GUA_TRUTH_A");
    spawn_sleeper(k_uid_b, "GUA_TRUTH_B");
    const json scenario = {
        {"devices", card()},
        {"processes", concat(windows("GUA_TRUTH_A", a(), 8000, k_late, 5 + k_late),
                             json::array({proc("GUA_TRUTH_B", b(), steady(8000))}))}};
    check(run_truth(scenario, run_spec()), "early end " + label());
}

// An MPS server (B) idles next to its client (A), which computes for 5 s and holds its memory for
// 10 s of each period: the client is charged only while it holds memory, the server's idle time
// alone is the server's.
TEST_P(TruthHeld, MpsClientAndServer) {
    spawn_sleeper(k_uid_a, "GUA_TRUTH_A");
    spawn_sleeper(k_uid_b, "GUA_TRUTH_B");
    const json server = proc("GUA_TRUTH_B", b(), steady(2000), 0, 1e6, "mps");
    const json busy = periodic(0, 5, 100, 0);
    const json scenario = {{"devices", card(busy)},
                           {"processes", concat(windows("GUA_TRUTH_A", a(), 6000, k_late,
                                                        10 + k_late, "compute", busy),
                                                json::array({server}))}};
    check(run_truth(scenario, run_spec()), "MPS " + label());
}

INSTANTIATE_TEST_SUITE_P(Intervals, TruthHeld, ::testing::Values(1.0, 30.0),
                         [](const ::testing::TestParamInfo<double>& p) {
                             return fmt::format("Every{}s", p.param);
                         });

} // namespace truth_held_test
} // namespace gua::e2e
