// SPDX-License-Identifier: Apache-2.0
// Ground truth end to end: scenarios that earlier versions measured silently wrong (dry rings,
// short rings, the rings of a real H200, snapshot-only drivers, failed process-list reads,
// per-process attribution at long intervals, co-tenants, MIG, partial GPU loss), each run through
// the real daemon on the fake driver at 1 s and 30 s and held to the scenario's integrated truth
// (truth_harness.hpp).
#include "e2e/truth_harness.hpp"

namespace gua::e2e {
namespace {

constexpr std::uint32_t k_uid_a = 1500;
constexpr std::uint32_t k_uid_b = 1501;

/// Pulses of `high` lasting `on_s` every `period_s`, starting at `phase_s`; `low` otherwise.
json pulses(double period_s, double on_s, double phase_s, double until_s, double high = 100,
            double low = 0) {
    json points = json::array({json::array({0.0, low})});
    for (double t = phase_s; t < until_s; t += period_s) {
        points.push_back({t, high});
        points.push_back({t + on_s, low});
    }
    return points;
}

/// A constant series.
json steady(double value) {
    return json::array({json::array({0.0, value})});
}

/// A process of the scenario held by a real sleeper (identity resolved on the real /proc).
json proc(int device, const std::string& pid_env, const std::string& who, double mib,
          const json& sm_util = steady(0)) {
    return {{"device", device},
            {"pid_env", pid_env},
            {"who", who},
            {"memory_mib", steady(mib)},
            {"sm_util", sm_util}};
}

std::string uuid(int i) {
    return fmt::format("GPU-7e57{:04d}-0000-0000-0000-000000000000", i);
}

class TruthScenario : public TruthTest, public ::testing::WithParamInterface<double> {
  protected:
    TruthRun run_spec(FakeVariant variant = FakeVariant::modern) const {
        TruthRun r;
        r.interval_s = GetParam();
        r.ticks = GetParam() >= 30 ? 20 : 40;
        r.variant = variant;
        return r;
    }
    double until() const { return 600 + run_spec().interval_s * run_spec().ticks + 60; }
    std::string label() const { return fmt::format("{}s", GetParam()); }
    std::string a() { return user_label(k_uid_a); }
    std::string b() { return user_label(k_uid_b); }
};

// A dry ring (no entries while idle) whose 1 s bursts end exactly at the polls (every 5 s, on
// the poll grid of both intervals): 20 % active. A continuous ring with the same load and a dry
// ring that never runs are the controls.
TEST_P(TruthScenario, DryRingBurstsAtThePolls) {
    spawn_sleeper(k_uid_a, "GUA_TRUTH_A");
    const json burst = pulses(5, 1, 4, until());
    const json scenario = {
        {"devices",
         {{{"uuid", uuid(0)}, {"util_idle_mode", "dry"}, {"util", burst}},
          {{"uuid", uuid(1)}, {"util_idle_mode", "dry"}, {"util", steady(0)}},
          {{"uuid", uuid(2)}, {"util", burst}}}},
        {"processes",
         {proc(0, "GUA_TRUTH_A", a(), 8000, burst), proc(1, "GUA_TRUTH_A", a(), 8000),
          proc(2, "GUA_TRUTH_A", a(), 8000, burst)}}};
    check(run_truth(scenario, run_spec()), "dry ring " + label());
}

// A ring of 6 entries at 0.1 s holds 0.6 s, far less than the poll span. One card's bursts end
// at the polls (20 % active, the ring shows only busy entries), the other's start at them (50 %
// active, the ring shows only idle entries).
TEST_P(TruthScenario, ShortRing) {
    spawn_sleeper(k_uid_a, "GUA_TRUTH_A");
    const json late = pulses(5, 1, 4, until());
    const json early = pulses(5, 2.5, 0, until());
    const json scenario = {
        {"devices",
         {{{"uuid", uuid(0)}, {"ring_size", 6}, {"util_period_s", 0.1}, {"util", late}},
          {{"uuid", uuid(1)}, {"ring_size", 6}, {"util_period_s", 0.1}, {"util", early}}}},
        {"processes",
         {proc(0, "GUA_TRUTH_A", a(), 8000, late), proc(1, "GUA_TRUTH_A", a(), 8000, early)}}};
    check(run_truth(scenario, run_spec()), "short ring " + label());
}

// The rings as driver 580.159.04 keeps them on an H200 (docs/real-driver.md): 71 entries 200 ms
// apart (14 s), entries while idle, a full-load entry reading 99, and a 72-entry per-process
// table that refuses smaller buffers. A 21 GiB holder idles between 20 s runs every 45 s.
TEST_P(TruthScenario, RingsOfDriver580OnH200) {
    spawn_sleeper(k_uid_a, "GUA_TRUTH_A");
    spawn_sleeper(k_uid_b, "GUA_TRUTH_B");
    const json runs = pulses(45, 20, 10, until(), 99, 0);
    const json h200 = {{"ring_size", 71}, {"util_period_s", 0.2}, {"process_util_size", 72}};
    json card = h200;
    card["uuid"] = uuid(0);
    card["util"] = runs;
    const json scenario = {
        {"devices", {card}},
        {"processes",
         {proc(0, "GUA_TRUTH_A", a(), 21090), proc(0, "GUA_TRUTH_B", b(), 1002, runs)}}};
    check(run_truth(scenario, run_spec()), "H200 rings " + label());
}

// The v1 driver has no sample ring: once-per-poll snapshots. Bursts of 0.5 s every 4 s fall
// between the polls (12.5 % active); a steady card is the control.
TEST_P(TruthScenario, SnapshotOnlyDriver) {
    spawn_sleeper(k_uid_a, "GUA_TRUTH_A");
    const json bursty = pulses(4, 0.5, 0.25, until());
    const json scenario = {
        {"devices",
         {{{"uuid", uuid(0)}, {"util", bursty}}, {{"uuid", uuid(1)}, {"util", steady(80)}}}},
        {"processes",
         {proc(0, "GUA_TRUTH_A", a(), 8000, bursty),
          proc(1, "GUA_TRUTH_A", a(), 8000, steady(80))}}};
    check(run_truth(scenario, run_spec(FakeVariant::v1)), "snapshot driver " + label());
}

// The compute process list fails (NVML error 999) for half of the run while 8 GiB are held on
// an idle card: the card is idle-held throughout; its holders are unknown, never "none".
TEST_P(TruthScenario, FailedProcessListWithMemoryInUse) {
    spawn_sleeper(k_uid_a, "GUA_TRUTH_A");
    const double span = run_spec().interval_s * run_spec().ticks;
    const json scenario = {
        {"devices",
         {{{"uuid", uuid(0)}, {"util", steady(2)}}, {{"uuid", uuid(1)}, {"util", steady(2)}}}},
        {"processes", {proc(0, "GUA_TRUTH_A", a(), 8000), proc(1, "GUA_TRUTH_A", a(), 8000)}},
        {"faults",
         {{{"function", "nvmlDeviceGetComputeRunningProcesses"},
           {"device", 0},
           {"from", 600 + span / 4},
           {"to", 600 + 3 * span / 4},
           {"error", 999}}}}};
    check(run_truth(scenario, run_spec()), "failed process list " + label());
}

// A is busy (100 % SM) for the first half of every 30 s, B does 8 % all along; the card reads
// 100 % while A runs and 8 % (below the active threshold) otherwise. Active time goes to A and B
// by their SM shares while it happens (100:8), idle-held time by memory (8000:4000).
TEST_P(TruthScenario, PerProcessAttributionAtLongIntervals) {
    spawn_sleeper(k_uid_a, "GUA_TRUTH_A");
    spawn_sleeper(k_uid_b, "GUA_TRUTH_B");
    const json card = pulses(30, 15, 0, until(), 100, 8);
    const json busy_a = pulses(30, 15, 0, until(), 100, 0);
    const json scenario = {{"devices", {{{"uuid", uuid(0)}, {"util", card}}}},
                           {"processes",
                            {proc(0, "GUA_TRUTH_A", a(), 8000, busy_a),
                             proc(0, "GUA_TRUTH_B", b(), 4000, steady(8))}}};
    check(run_truth(scenario, run_spec()), "attribution " + label());
}

// Two users share card 0: 40 s of every 60 s the card is busy with A at 60 % SM and B at 30 %,
// then idle at 3 % while both hold memory (A 8000 MiB, B 24000 MiB). Card 1 is A's alone.
TEST_P(TruthScenario, CoTenants) {
    spawn_sleeper(k_uid_a, "GUA_TRUTH_A");
    spawn_sleeper(k_uid_b, "GUA_TRUTH_B");
    const json card = pulses(60, 40, 0, until(), 100, 3);
    const json scenario = {
        {"devices",
         {{{"uuid", uuid(0)}, {"util", card}}, {{"uuid", uuid(1)}, {"util", steady(50)}}}},
        {"processes",
         {proc(0, "GUA_TRUTH_A", a(), 8000, pulses(60, 40, 0, until(), 60, 0)),
          proc(0, "GUA_TRUTH_B", b(), 24000, pulses(60, 40, 0, until(), 30, 0)),
          proc(1, "GUA_TRUTH_A", a(), 8000, steady(50))}}};
    check(run_truth(scenario, run_spec()), "co-tenants " + label());
}

// One idle plain H100 and one in MIG mode with two 3g.40gb instances held by A. The instances
// have no utilization: unmeasured, so "GPUs equivalently unused" counts the plain card only
// (1.0), and an instance is priced at 3/7 of its parent card.
TEST_P(TruthScenario, MigNextToAnIdlePlainCard) {
    spawn_sleeper(k_uid_a, "GUA_TRUTH_A");
    const std::string model = "NVIDIA H100 80GB HBM3";
    json instances = json::array();
    for (int m = 0; m < 2; ++m) {
        instances.push_back({{"uuid", fmt::format("MIG-7e57{:04d}-0000-0000-0000-000000000000", m)},
                             {"name", "MIG 3g.40gb"},
                             {"memory_total_mib", 40000},
                             {"gpu_instance_id", 1 + m},
                             {"compute_instance_id", 0}});
    }
    json held_a = proc(1, "GUA_TRUTH_A", a(), 8000);
    held_a["mig_instance"] = 0;
    json held_b = proc(1, "GUA_TRUTH_A", a(), 6000);
    held_b["mig_instance"] = 1;
    const json scenario = {
        {"devices",
         {{{"uuid", uuid(0)}, {"name", model}},
          {{"uuid", uuid(1)}, {"name", model}, {"mig", true}, {"mig_instances", instances}}}},
        {"processes", {held_a, held_b}}};
    const TruthOutcome o = run_truth(scenario, run_spec());
    check(o, "MIG " + label());
    EXPECT_NEAR(o.figures.unused_equiv_gpus, 1.0, 0.01)
        << "only the plain card's capacity is measured, and it is unused";
    const auto& prices = o.figures.price_per_hour;
    const double plain = prices.contains(uuid(0)) ? prices.at(uuid(0)) : 0.0;
    ASSERT_GT(plain, 0) << "the plain card has a price";
    for (const json& inst : instances) {
        const std::string mig = inst["uuid"];
        EXPECT_NEAR(prices.contains(mig) ? prices.at(mig) : 0.0, plain * 3.0 / 7.0, 1e-6 * plain)
            << mig << " is priced as 3 of the card's 7 slices";
    }
}

// Card 1 falls off the bus for 7 s inside one tick (every call answers GPU_IS_LOST): the tick
// keeps its measured part, the lost part is flagged; nothing else of the card is lost.
TEST_P(TruthScenario, PartialGpuLoss) {
    spawn_sleeper(k_uid_a, "GUA_TRUTH_A");
    const double lost_from = 640;
    const double lost_s = 7;
    const json bursty = pulses(2, 1, 0, until());
    const json scenario = {
        {"devices",
         {{{"uuid", uuid(0)}, {"util", steady(50)}}, {{"uuid", uuid(1)}, {"util", bursty}}}},
        {"processes",
         {proc(0, "GUA_TRUTH_A", a(), 8000, steady(50)),
          proc(1, "GUA_TRUTH_A", a(), 8000, bursty)}},
        {"faults",
         {{{"function", "*"},
           {"device", 1},
           {"from", lost_from},
           {"to", lost_from + lost_s},
           {"error", 15}}}}};
    const TruthOutcome o = run_truth(scenario, run_spec());
    check(o, "partial GPU loss " + label());
    ASSERT_TRUE(o.truth.contains(uuid(1))) << "the lost card has card-ticks";
    EXPECT_GE(o.truth.at(uuid(1)).recorded_s, o.span_s - lost_s - 1e-3)
        << "at most the lost time is missing from the card's record";
    EXPECT_GE(o.truth.at(uuid(0)).recorded_s, o.span_s - 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Intervals, TruthScenario, ::testing::Values(1.0, 30.0),
                         [](const ::testing::TestParamInfo<double>& p) {
                             return fmt::format("Every{}s", p.param);
                         });

} // namespace
} // namespace gua::e2e
