// SPDX-License-Identifier: Apache-2.0
// End to end: the real `gua daemon` records a fake driver whose cards follow a known scenario, and
// `gua report` gives back the scenario's ground truth — steady states, a pulse, and bursty load
// that a once-per-interval snapshot would get badly wrong.
#include "e2e/daemon_e2e.hpp"

#include <algorithm>
#include <fstream>

namespace gua::e2e {
namespace {

// Scenario time runs 4× real time; the daemon ticks every 0.5 s (2 scenario seconds) 8 times.
constexpr double k_scale = 4;
constexpr int k_ticks = 8;
// Scenario s: GPU 3 is busy over [10, 14) = 1 real second, from 2.5 s after nvmlInit: inside the
// recording unless the daemon took over 2.5 s from nvmlInit to its first tick (a loaded sanitizer
// run can take 2 s), and counted exactly as far as it overlaps the recording either way.
constexpr double k_pulse_from = 10;
constexpr double k_pulse_to = 14;
constexpr double k_wave_until = 400; // scenario s; far beyond any run of this test

class DaemonE2ETruth : public DaemonTest {};

// Per card, with a holder of 8000 MiB wherever a process is listed:
//   0: 80 %                 → active 100 %
//   1: 2 %                  → idle-held 100 %
//   2: 0 %, no process      → truly idle 100 %
//   3: 2 %, 80 % over [10,14) → active 1.0 real s (what of it was recorded), the rest idle-held
//   4: 100/0 % every 0.5 s  → active 50 %, idle-held 50 %
//   5: 100 % 0.5 s, 0 % 1.5 s (period 2 scenario s = one tick) → active 25 %, idle-held 75 %
// Card 5's burst period equals the tick, so a reading once per tick would see the same phase every
// time: 0 % (three phases in four) or 100 % — never 25 %. Only integrating the driver's sample
// buffer over the whole tick gets it right.
json truth_scenario() {
    json devices = json::array({
        {{"util", {{0, 80}}}},
        {{"util", {{0, 2}}}},
        {{"util", {{0, 0}}}},
        {{"util", {{0, 2}, {k_pulse_from, 80}, {k_pulse_to, 2}}}},
        {{"util", square_wave(0.5, 0.5, k_wave_until)}},
        {{"util", square_wave(0.5, 1.5, k_wave_until)}},
    });
    json processes = json::array();
    for (int gpu : {0, 1, 3, 4, 5}) {
        processes.push_back(holder(gpu, 8000, 0, 40000 + gpu));
    }
    return {{"time_scale", k_scale}, {"devices", devices}, {"processes", processes}};
}

TEST_F(DaemonE2ETruth, ReportEqualsTheScenarioGroundTruth) {
    write_scenario(truth_scenario());
    const std::string init_file = path("nvml-init");
    set_env("GUA_FAKE_NVML_INIT_FILE", init_file);
    const test::RunResult r =
        run_daemon({"--interval", "500ms", "--ticks", std::to_string(k_ticks), "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("gua daemon stopped after 8 ticks"), std::string::npos) << r.err;

    test::RawDb raw(db());
    // The pulse on the wall clock (scenario time 0 is the fake's nvmlInit), and the part of it
    // that lies inside GPU 3's recording.
    double epoch_s = 0;
    ASSERT_TRUE(std::ifstream(init_file) >> epoch_s) << "the fake driver wrote no init time";
    epoch_s /= 1e6;
    const double first_t0 =
        std::stod(raw.one("SELECT min(c.t0_us) FROM card_tick c JOIN gpu g ON g.id = c.gpu_id "
                          "WHERE g.idx = 3")) /
        1e6;
    const double last_t1 = std::stod(raw.one("SELECT max(c.t0_us + c.duration_us) FROM card_tick "
                                             "c JOIN gpu g ON g.id = c.gpu_id WHERE g.idx = 3")) /
                           1e6;
    const double pulse_s = std::min(last_t1, epoch_s + k_pulse_to / k_scale) -
                           std::max(first_t0, epoch_s + k_pulse_from / k_scale);
    ASSERT_GT(pulse_s, 0.25) << "the daemon took " << first_t0 - epoch_s
                             << " s from nvmlInit to its first tick: too long for this scenario";
    EXPECT_EQ(raw.one("SELECT count(*) FROM card_tick"), std::to_string(6 * k_ticks));
    EXPECT_EQ(raw.one("SELECT count(*) FROM card_tick WHERE util_source != 2"), "0")
        << "every card-tick integrates the driver's sample buffer";

    const json rep = report();
    ASSERT_EQ(rep["samples"], 6 * k_ticks);
    // Tolerances: steady cards are exact (1e-6). Elsewhere each poll's samples cover the scenario
    // time since the previous poll, quantized to the ring period (1/6 scenario s), and are rescaled
    // to the poll's real duration; at the edges of the recording a partial burst period is counted.
    // That bounds the error to about ±1 % of a share here (observed: < 1e-4 on an idle machine);
    // the tolerances allow 2 % for a loaded one.
    struct Truth {
        double active, idle_held, truly_idle, tolerance;
    };
    const double gpu3_active = pulse_s / recorded_seconds(3);
    const std::vector<Truth> truth = {
        {1, 0, 0, 1e-6},     {0, 1, 0, 1e-6},
        {0, 0, 1, 1e-6},     {gpu3_active, 1 - gpu3_active, 0, 0.015},
        {0.5, 0.5, 0, 0.02}, {0.25, 0.75, 0, 0.02},
    };
    double active_total_s = 0;
    for (int gpu = 0; gpu < 6; ++gpu) {
        SCOPED_TRACE("GPU " + std::to_string(gpu));
        const json row = gpu_row(rep, gpu);
        const json& st = row["states"];
        const Truth& t = truth[static_cast<std::size_t>(gpu)];
        EXPECT_EQ(row["samples"], k_ticks);
        EXPECT_NEAR(st["active"].get<double>(), t.active, t.tolerance);
        EXPECT_NEAR(st["idle_held"].get<double>(), t.idle_held, t.tolerance);
        EXPECT_NEAR(st["truly_idle"].get<double>(), t.truly_idle, t.tolerance);
        // GPU-hours are the card's real recorded time split by the shares.
        const double recorded = recorded_seconds(gpu);
        EXPECT_GT(recorded, 0.9 * k_ticks * 0.5);
        EXPECT_NEAR(seconds(st["active_gpu_hours"]) + seconds(st["idle_held_gpu_hours"]) +
                        seconds(st["truly_idle_gpu_hours"]),
                    recorded, 1e-3);
        EXPECT_NEAR(seconds(st["active_gpu_hours"]), st["active"].get<double>() * recorded, 1e-3);
        active_total_s += seconds(st["active_gpu_hours"]);
    }
    // The pulse, in GPU-seconds: its recorded part at 80 % (±1 ring period each side).
    EXPECT_NEAR(seconds(gpu_row(rep, 3)["states"]["active_gpu_hours"]), pulse_s, 0.05);
    // Efficiency buckets of the bursty cards: 100 % is compute-bound, 0 % idle.
    EXPECT_NEAR(gpu_row(rep, 4)["efficiency"]["compute_bound"].get<double>(), 0.5, 0.05);
    EXPECT_NEAR(gpu_row(rep, 5)["efficiency"]["compute_bound"].get<double>(), 0.25, 0.05);
    EXPECT_NEAR(gpu_row(rep, 5)["efficiency"]["idle"].get<double>(), 0.75, 0.05);
    EXPECT_NEAR(seconds(rep["headline"]["active_gpu_hours"]), active_total_s, 1e-3);
    // Truly idle is only card 2; idle-held is everything else that is not active.
    EXPECT_NEAR(seconds(rep["waste"]["truly_idle_gpu_hours"]), recorded_seconds(2), 1e-3);
    EXPECT_EQ(rep["waste"]["gpus_in_window"], 6);
}

} // namespace
} // namespace gua::e2e
