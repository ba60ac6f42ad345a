// SPDX-License-Identifier: Apache-2.0
// Ground truth end to end for failed reads while a card is busy: a process list that fails, one
// that keeps growing between the size query and the data calls, and a failed per-process
// utilization read — through the real daemon on the fake driver at 1 s and 30 s, held to the
// scenario's integrated truth (truth_harness.hpp). What a fault touches is flagged (holders
// unknown): never "(no process)", never split by memory, so no identity is charged more than it
// held or used, and the flagged time is what the fault window covered.
#include "e2e/truth_harness.hpp"

namespace gua::e2e {
namespace truth_faults_test { // named after the file: unique in a unity batch

constexpr std::uint32_t k_uid_a = 1500;
constexpr std::uint32_t k_uid_b = 1501;
constexpr double k_period = 30; ///< the busy pattern repeats every 30 s of scenario time
constexpr double k_start = 600; ///< scenario time of the daemon's first poll
constexpr double k_late = 0.05; ///< how long after a poll a change happens
const char* const k_uuid = "GPU-7e570000-0000-0000-0000-000000000000";

json steady(double value) {
    return json::array({json::array({0.0, value})});
}

/// 100 during [k_late, 20 + k_late) of every period, 0 otherwise: busy two thirds of the time.
json busy_two_thirds() {
    json points = json::array({json::array({0.0, 0})});
    for (double p = k_start - k_period; p < k_start + 1300; p += k_period) {
        points.push_back({p + k_late, 100});
        points.push_back({p + 20 + k_late, 0});
    }
    return points;
}

/// A process of `who` (a real sleeper named by `pid_env`) alive all along.
json proc(const std::string& pid_env, const std::string& who, double mib, const json& sm_util) {
    return {{"device", 0},       {"pid_env", pid_env},        {"who", who},
            {"type", "compute"}, {"memory_mib", steady(mib)}, {"sm_util", sm_util}};
}

class TruthFaults : public TruthTest, public ::testing::WithParamInterface<double> {
  protected:
    TruthRun run_spec() const {
        TruthRun r;
        r.interval_s = GetParam();
        r.ticks = GetParam() >= 30 ? 20 : 60;
        r.start_s = k_start;
        return r;
    }
    double run_s() const { return run_spec().interval_s * run_spec().ticks; }
    /// The longest poll span: a tick, at most 5 s (the daemon polls at least that often).
    double poll_s() const { return std::min(GetParam(), 5.0); }
    std::string label() const { return fmt::format("{}s", GetParam()); }
    std::string a() { return user_label(k_uid_a); }
    std::string b() { return user_label(k_uid_b); }

    /// Starts A (busy two thirds of the time, `mib_a`) and B (idle, `mib_b`) on one card.
    json scenario(double mib_a, double mib_b, const json& faults,
                  const json& device = json::object()) {
        spawn_sleeper(k_uid_a, "GUA_TRUTH_A");
        spawn_sleeper(k_uid_b, "GUA_TRUTH_B");
        json card = {{"uuid", k_uuid}, {"util", busy_two_thirds()}};
        card.update(device);
        return {{"devices", json::array({card})},
                {"processes", json::array({proc("GUA_TRUTH_A", a(), mib_a, busy_two_thirds()),
                                           proc("GUA_TRUTH_B", b(), mib_b, steady(0))})},
                {"faults", faults}};
    }

    /// A fault of `function` (NVML error 999) over the middle half of the run.
    json middle_half(const std::string& function) const {
        return json::array({{{"function", function},
                             {"from", k_start + run_s() / 4},
                             {"to", k_start + 3 * run_s() / 4},
                             {"error", 999}}});
    }

    /// The card's holders-unknown seconds in the report.
    static double holders_unknown_s(const TruthOutcome& o) {
        const json gpu = gpu_row(o.report, 0);
        return seconds(gpu["provenance"]["holders_unknown_gpu_hours"]);
    }

    /// Nobody is charged more than the truth (1 pp of the card's time for the poll grid), and
    /// "(no process)" gets nothing: what the fault touched is flagged, not attributed.
    void expect_no_one_overcharged(const TruthOutcome& o, const std::string& name) const {
        const double card_s = o.truth.at(k_uuid).recorded_s;
        for (const auto& [who, gua_s] : o.figures.identity_s) {
            const double truth_s =
                o.truth_identity_s.contains(who) ? o.truth_identity_s.at(who) : 0.0;
            EXPECT_LE(gua_s, truth_s + 0.01 * card_s) << name << ": " << who << " charged " << gua_s
                                                      << " s, held or used " << truth_s << " s";
        }
        EXPECT_FALSE(o.figures.identity_s.contains("(no process)"))
            << name << ": " << o.report["identities"].dump(2);
    }
};

// The compute process list fails for the middle half of the run while A computes two thirds of
// the time and B holds memory idle: the failed polls' whole measured time is holders unknown —
// active time included, which earlier went to "(no process)" unflagged (A 39 pp low).
TEST_P(TruthFaults, AFailedProcessListWhileTheCardIsBusy) {
    const json s = scenario(8000, 3000, middle_half("nvmlDeviceGetComputeRunningProcesses"));
    const TruthOutcome o = run_truth(s, run_spec());
    const std::string name = "failed list while busy " + label();
    check(o, name);
    expect_no_one_overcharged(o, name);
    // Flagged: the recorded time of the fault window, give or take one poll at each edge.
    const test::GroundTruth truth(s);
    const double from = k_start + run_s() / 4;
    const double to = k_start + 3 * run_s() / 4;
    const double inner = truth.integrate(k_uuid, {{from + poll_s(), to - poll_s()}}).recorded_s;
    const double outer = truth.integrate(k_uuid, {{from - poll_s(), to + poll_s()}}).recorded_s;
    EXPECT_GE(holders_unknown_s(o), inner) << name;
    EXPECT_LE(holders_unknown_s(o), outer) << name;
    std::cout << fmt::format("[truth] {}: holders unknown {:.1f} s (window {:.1f}-{:.1f} s)\n",
                             name, holders_unknown_s(o), inner, outer);
}

// The compute list keeps growing between the size query and the data calls (every data call
// answers INSUFFICIENT_SIZE) for the first 60 data calls: those polls' time is holders unknown,
// flagged, never "(no process)" (6.7 pp unflagged before).
TEST_P(TruthFaults, AProcessListThatKeepsGrowing) {
    const json s = scenario(8000, 3000, json::array(),
                            {{"process_list_growth", {{"extra", 10}, {"calls", 60}}}});
    const TruthOutcome o = run_truth(s, run_spec());
    const std::string name = "growing list " + label();
    check(o, name);
    expect_no_one_overcharged(o, name);
    // Each failed poll makes at most 5 data calls: at least 60 / 5 polls fail, each a poll span.
    EXPECT_GT(holders_unknown_s(o), 0) << name;
    EXPECT_LE(holders_unknown_s(o), 60 / 5 * poll_s() + 1e-3) << name;
    std::cout << fmt::format("[truth] {}: holders unknown {:.1f} s\n", name, holders_unknown_s(o));
}

// The per-process utilization read fails for the middle half of the run while A computes and B
// holds memory idle: the active time of the failed polls is flagged, never split by memory (B
// was charged 75 % of A's active time, 37.5 pp).
TEST_P(TruthFaults, AFailedPerProcessUtilizationRead) {
    const json s = scenario(1000, 3000, middle_half("nvmlDeviceGetProcessUtilization"));
    const TruthOutcome o = run_truth(s, run_spec());
    const std::string name = "failed per-process read " + label();
    check(o, name);
    expect_no_one_overcharged(o, name);
    // Flagged: A's active time inside the fault window, give or take one poll at each edge (the
    // idle time of those polls is still B's and A's by memory).
    const test::GroundTruth truth(s);
    const double from = k_start + run_s() / 4;
    const double to = k_start + 3 * run_s() / 4;
    const double inner = truth.integrate(k_uuid, {{from + poll_s(), to - poll_s()}}).active_s;
    const double outer = truth.integrate(k_uuid, {{from - poll_s(), to + poll_s()}}).active_s;
    EXPECT_GE(holders_unknown_s(o), inner) << name;
    EXPECT_LE(holders_unknown_s(o), outer) << name;
    std::cout << fmt::format("[truth] {}: holders unknown {:.1f} s (window {:.1f}-{:.1f} s)\n",
                             name, holders_unknown_s(o), inner, outer);
}

INSTANTIATE_TEST_SUITE_P(Intervals, TruthFaults, ::testing::Values(1.0, 30.0),
                         [](const ::testing::TestParamInfo<double>& p) {
                             return fmt::format("Every{}s", p.param);
                         });

} // namespace truth_faults_test
} // namespace gua::e2e
