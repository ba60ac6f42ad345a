// SPDX-License-Identifier: Apache-2.0
// `gua job ID` over a real daemon's recording: a Slurm job mapped to two cards through the
// mapping directory, one busy with its process and one never touched — the per-card split and
// the notes against what the scenario integrates to; unknown ids and the epilog mode.
#include "e2e/daemon_e2e.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace gua::e2e {
namespace job_e2e_test { // named after the file: unique in a unity batch

class JobE2E : public DaemonTest {
  protected:
    std::string jobs() const { return path("jobs"); }
    /// Both cards allocated to Slurm job 4242 of alice (account physics).
    void map_both_cards() const {
        std::filesystem::create_directories(jobs() + "/.gua-owners");
        write_atomically(jobs() + "/.gua-owners/4242", "user=alice\naccount=physics\n");
        write_atomically(jobs() + "/0", "4242\n");
        write_atomically(jobs() + "/1", "4242\n");
    }
    /// Σ of card_tick column `column` of GPU `index`, in seconds.
    double sum_of(const std::string& column, int index) const {
        test::RawDb raw(db());
        return std::stod(raw.one("SELECT total(c." + column +
                                 ") FROM card_tick c JOIN gpu g ON g.id = c.gpu_id WHERE g.idx = " +
                                 std::to_string(index))) /
               1e6;
    }
    void record() {
        // Card 0 busy at 100 % with an 8000 MiB process of this test; card 1 idle, untouched.
        write_scenario({{"devices", {{{"util", {{0, 100}}}}, {{"util", {{0, 0}}}}}},
                        {"processes", {holder(0, 8000, 100, static_cast<int>(getpid()))}}});
        map_both_cards();
        const test::RunResult r = run_daemon(
            {"--interval", "500ms", "--ticks", "6", "--quiet", "--allocation-dir", jobs()});
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    static json card(const json& job, int index) {
        for (const json& g : job["gpus"]) {
            if (g["index"] == index) {
                return g;
            }
        }
        ADD_FAILURE() << "GPU " << index << " not in " << job.dump(2);
        return json::object();
    }
};

TEST_F(JobE2E, OneOfTwoAllocatedCardsUsedIsSaidSoWithItsSplit) {
    record();
    const test::RunResult r = test::run_gua({"job", "4242", "--db", db(), "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json job = json::parse(r.out);
    EXPECT_EQ(job["job"]["kind"], "slurm-job");
    EXPECT_EQ(job["job"]["user"], "alice");
    EXPECT_EQ(job["job"]["account"], "physics");
    EXPECT_EQ(job["job"]["gpus_allocated"], 2);
    EXPECT_EQ(job["job"]["gpus_used"], 1);
    // Card 0: its measured time active (100 % busy), less any stretch before the directory's
    // first reading (allocation unknown then).
    const double h = 3600.0;
    const json c0 = card(job, 0);
    const double allocated0 = sum_of("allocated_us", 0);
    EXPECT_GT(allocated0, 2.0);
    EXPECT_NEAR(c0["allocated_gpu_hours"].get<double>() * h, allocated0, 1e-3);
    EXPECT_NEAR(c0["active_gpu_hours"].get<double>() * h,
                measured_seconds(0) - sum_of("alloc_unknown_us", 0), 0.05);
    EXPECT_EQ(c0["peak_memory_mib"], 8000);
    EXPECT_TRUE(c0["used"].get<bool>());
    // Card 1: allocated, cold, unheld: allocated-unused for its measured allocated time.
    const json c1 = card(job, 1);
    EXPECT_FALSE(c1["used"].get<bool>());
    EXPECT_NEAR(c1["allocated_unused_gpu_hours"].get<double>() * h,
                sum_of("allocated_unused_us", 1), 1e-3);
    EXPECT_NEAR(c1["allocated_unused_gpu_hours"].get<double>() * h,
                measured_seconds(1) - sum_of("alloc_unknown_idle_us", 1), 0.05);
    EXPECT_EQ(c1["active_gpu_hours"], 0.0);
    const std::vector<std::string> notes = job["notes"];
    ASSERT_FALSE(notes.empty());
    EXPECT_EQ(notes[0], "used 1 of 2 allocated GPUs: ask for 1 (--gres=gpu:1)");

    // The text form says the same; the report counts card 1 as allocated-unused.
    const test::RunResult text = test::run_gua({"job", "4242", "--db", db()});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("slurm-job 4242 · user alice · account physics"), std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("- used 1 of 2 allocated GPUs"), std::string::npos) << text.out;
    const json rep = report();
    EXPECT_GT(rep["headline"]["allocated_unused_gpu_hours"].get<double>(), 0.0);
}

TEST_F(JobE2E, AnUnknownIdIsOneLineAndTheEpilogNeverFails) {
    record();
    const test::RunResult r = test::run_gua({"job", "999", "--db", db()});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("no allocation \"999\" recorded"), std::string::npos) << r.err;
    EXPECT_EQ(test::count_of(r.err, "\n"), 1) << r.err;
    // The epilog takes the id from SLURM_JOB_ID and exits 0 whatever happens.
    const test::RunResult e =
        test::run_gua({"job", "--epilog", "--db", db()}, {{"SLURM_JOB_ID", "999"}});
    EXPECT_EQ(e.exit_code, 0);
    EXPECT_NE(e.err.find("gua job --epilog: "), std::string::npos) << e.err;
    const test::RunResult ok =
        test::run_gua({"job", "--epilog", "--db", db()}, {{"SLURM_JOB_ID", "4242"}});
    EXPECT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_NE(ok.out.find("slurm-job 4242"), std::string::npos) << ok.out;
    // No id at all, outside an epilog: a usage error.
    EXPECT_EQ(test::run_gua({"job", "--db", db()}).exit_code, 2);
}

TEST_F(JobE2E, ReportOfTheJobAndByJobAgreeWithGuaJob) {
    record();
    const test::RunResult r = test::run_gua({"job", "4242", "--db", db(), "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json job = json::parse(r.out);
    const json& total = job["total"];
    // `gua report --job`: every section over the job's share of its two cards.
    const test::RunResult one =
        test::run_gua({"report", "--db", db(), "--job", "4242", "--format", "json"});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    const json rep = json::parse(one.out);
    EXPECT_EQ(rep["window"]["filters"], json::array({"job=4242"}));
    for (const char* key : {"active_gpu_hours", "idle_held_gpu_hours"}) {
        EXPECT_NEAR(rep["headline"][key].get<double>(), total[key].get<double>(), 1e-9) << key;
    }
    EXPECT_NEAR(rep["headline"]["allocated_unused_gpu_hours"].get<double>(),
                total["allocated_unused_gpu_hours"].get<double>(), 1e-9);
    EXPECT_NEAR(rep["headline"]["truly_idle_gpu_hours"].get<double>(), 0.0, 1e-12);
    // `--group-by job`: one row, the job's figures, owner alice.
    const test::RunResult by =
        test::run_gua({"report", "--db", db(), "--group-by", "job", "--format", "json"});
    ASSERT_EQ(by.exit_code, 0) << by.err;
    const json jobs = json::parse(by.out)["jobs"];
    ASSERT_EQ(jobs["total"], 1);
    const json& row = jobs["top"][0];
    EXPECT_EQ(row["id"], "4242");
    EXPECT_EQ(row["kind"], "slurm-job");
    EXPECT_EQ(row["owner"], "alice");
    EXPECT_EQ(row["gpus_allocated"], 2);
    EXPECT_FALSE(row["from_summary"].get<bool>());
    for (const char* key : {"allocated_gpu_hours", "active_gpu_hours", "idle_held_gpu_hours",
                            "allocated_unused_gpu_hours"}) {
        EXPECT_NEAR(row[key].get<double>(), total[key].get<double>(), 1e-9) << key;
    }
    EXPECT_EQ(row["cost_cents"].get<double>(),
              std::round(job["cost"]["allocated"].get<double>() * 100));
    const test::RunResult text = test::run_gua({"report", "--db", db(), "--group-by", "job"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("§4 Top jobs"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("  4242 "), std::string::npos) << text.out;
}

// Ticks of 100 ms on the fake's default ring (a sample every 1/6 s): a tick ending inside the
// period still running finds nothing new in the ring, and on a busy card that tick's time is
// unmeasured (docs/measurement.md, "Adaptive polling"). Only a tick whose span holds the end of a
// period is measured — interval / period = 0.6 of the time in the long run — so the busy card is
// about 60 % active and 40 % unmeasured, and `gua job`, `--group-by job` and the report's own row
// of the card say so alike: they read the same card-ticks.
TEST_F(JobE2E, PollsFasterThanTheRingLeaveTheSameUnmeasuredTimeInJobAndReport) {
    write_scenario({{"devices", {{{"util", {{0, 100}}}}, {{"util", {{0, 0}}}}}},
                    {"processes", {holder(0, 8000, 100, static_cast<int>(getpid()))}}});
    map_both_cards();
    const test::RunResult d =
        run_daemon({"--interval", "100ms", "--ticks", "60", "--quiet", "--allocation-dir", jobs()});
    ASSERT_EQ(d.exit_code, 0) << d.err;
    const test::RunResult r = test::run_gua({"job", "4242", "--db", db(), "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json job = json::parse(r.out);
    const json c0 = card(job, 0);
    const json g0 = gpu_row(report(), 0)["states"];
    const double allocated = seconds(c0["allocated_gpu_hours"]);
    const double recorded = recorded_seconds(0);
    // The job held card 0 for all of the recording (the directory was read before the first
    // tick), so the job's card and the report's card are the same card-ticks.
    EXPECT_NEAR(allocated, recorded, 1e-6);
    EXPECT_NEAR(seconds(c0["active_gpu_hours"]), seconds(g0["active_gpu_hours"]), 1e-6);
    EXPECT_NEAR(seconds(c0["unmeasured_gpu_hours"]), seconds(g0["unmeasured_gpu_hours"]), 1e-6);
    EXPECT_NEAR(seconds(c0["unmeasured_gpu_hours"]), recorded - measured_seconds(0), 1e-6);
    // The share measured: 0.1 s / (1/6 s), within what a loaded machine's late polls move it.
    EXPECT_NEAR(seconds(c0["active_gpu_hours"]) / allocated, 0.1 * 6, 0.12);
    const test::RunResult by =
        test::run_gua({"report", "--db", db(), "--group-by", "job", "--format", "json"});
    ASSERT_EQ(by.exit_code, 0) << by.err;
    const json row = json::parse(by.out)["jobs"]["top"][0];
    EXPECT_NEAR(seconds(row["unmeasured_gpu_hours"]), seconds(job["total"]["unmeasured_gpu_hours"]),
                1e-6);
}

TEST_F(JobE2E, BadJobFlagsAreOneLineUsageErrors) {
    record();
    const auto usage = [](const test::RunResult& r) {
        EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
        EXPECT_EQ(test::count_of(r.err, "\n"), 1) << r.err;
    };
    const test::RunResult unknown = test::run_gua({"report", "--db", db(), "--job", "999"});
    usage(unknown);
    EXPECT_NE(unknown.err.find("--job 999: no allocation"), std::string::npos) << unknown.err;
    usage(test::run_gua({"report", "--db", db(), "--job", "4242", "--since", "1d"}));
    usage(test::run_gua({"report", "--db", db(), "--job", "4242", "--user", "alice"}));
    usage(test::run_gua({"report", "--db", db(), "--group-by", "jobs"}));
    usage(test::run_gua({"report", "--prometheus", "http://127.0.0.1:9", "--group-by", "job"}));
}

} // namespace job_e2e_test
} // namespace gua::e2e
