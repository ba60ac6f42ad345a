// SPDX-License-Identifier: Apache-2.0
// The real `gua daemon --allocation-dir` over the fake driver: a card named in the mapping
// directory is recorded allocated (its idle time allocated-unused, the job in the allocation
// tables), the other not; a directory that vanishes mid-run makes the rest of the run unknown
// (unmeasured, flagged), never truly idle.
#include "e2e/daemon_e2e.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

namespace gua::e2e {
namespace allocation_record_test { // named after the file: unique in a unity batch

/// Two cards idle at 0 %, no process.
json idle_cards() {
    return {{"devices", json::array({{{"util", {{0, 0}}}}, {{"util", {{0, 0}}}}})},
            {"processes", json::array()}};
}

class AllocationRecord : public DaemonTest {
  protected:
    std::string jobs() const { return path("jobs"); }
    /// Card 0 allocated to Slurm job 4242 of alice (account physics).
    void map_card_zero() const {
        std::filesystem::create_directories(jobs() + "/.gua-owners");
        write_atomically(jobs() + "/.gua-owners/4242", "user=alice\naccount=physics\n");
        write_atomically(jobs() + "/0", "4242\n");
    }
    /// Σ of card_tick column `column` of GPU `index`, in seconds.
    double sum_of(const std::string& column, int index) const {
        test::RawDb raw(db());
        const std::string s = raw.one("SELECT total(c." + column +
                                      ") FROM card_tick c JOIN gpu g ON g.id = c.gpu_id WHERE "
                                      "g.idx = " +
                                      std::to_string(index));
        return std::stod(s) / 1e6;
    }
    double state_seconds(const std::string& column, int index) const {
        test::RawDb raw(db());
        return std::stod(raw.one("SELECT total(" + column +
                                 ") FROM card_tick_state WHERE gpu = " + std::to_string(index)));
    }
};

TEST_F(AllocationRecord, AMappedCardIsRecordedAllocated) {
    write_scenario(idle_cards());
    map_card_zero();
    const test::RunResult r =
        run_daemon({"--interval", "500ms", "--ticks", "4", "--quiet", "--allocation-dir", jobs()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    test::RawDb raw(db());
    EXPECT_EQ(raw.one("SELECT group_concat(kind || ' ' || alloc_id || ' ' || user || ' ' || "
                      "account) FROM allocation"),
              "slurm-job 4242 alice physics");
    // Card 0: every recorded second allocated (or, before the directory's first reading,
    // unknown); its measured idle time, without holders, allocated-unused.
    const double recorded = recorded_seconds(0);
    EXPECT_GT(recorded, 1.5);
    EXPECT_NEAR(sum_of("allocated_us", 0) + sum_of("alloc_unknown_us", 0), recorded, 1e-6);
    EXPECT_LT(sum_of("alloc_unknown_us", 0), 0.1);
    EXPECT_NEAR(sum_of("allocated_unused_us", 0) + sum_of("alloc_unknown_idle_us", 0),
                measured_seconds(0), 1e-6);
    EXPECT_NEAR(state_seconds("truly_idle_s", 0), 0.0, 1e-6);
    // Card 1: never allocated, truly idle.
    EXPECT_EQ(sum_of("allocated_us", 1), 0.0);
    EXPECT_LT(sum_of("alloc_unknown_us", 1), 0.1);
    EXPECT_NEAR(state_seconds("truly_idle_s", 1), measured_seconds(1),
                sum_of("alloc_unknown_idle_us", 1) + 1e-6);
    // One span, from the first card-tick of card 0 to its last.
    EXPECT_EQ(raw.one("SELECT count(*) FROM allocation_span"), "1");
}

TEST_F(AllocationRecord, ADirectoryThatVanishesIsUnknownNeverTrulyIdle) {
    write_scenario(idle_cards());
    map_card_zero();
    auto daemon = start_daemon(
        {"--interval", "500ms", "--ticks", "8", "--quiet", "--allocation-dir", jobs()});
    std::this_thread::sleep_for(1500ms);
    // Gone at once (a rename, not a removal file by file, which a scan could see half done).
    std::filesystem::rename(jobs(), path("jobs.gone"));
    const std::optional<int> code = daemon->wait_exit(30s);
    ASSERT_EQ(code, std::optional<int>(0)) << daemon->err();
    EXPECT_GT(sum_of("alloc_unknown_us", 0), 0.5);
    EXPECT_GT(sum_of("alloc_unknown_idle_us", 1), 0.5);
    // Neither card is ever read as truly idle after the directory went: card 0 was allocated,
    // then unknown; card 1 unallocated, then unknown.
    EXPECT_NEAR(state_seconds("truly_idle_s", 0), 0.0, 1e-6);
    EXPECT_GT(state_seconds("allocation_unknown_s", 1), 0.5);
    EXPECT_NEAR(state_seconds("unmeasured_s", 1),
                recorded_seconds(1) - measured_seconds(1) + sum_of("alloc_unknown_idle_us", 1),
                1e-3);
}

} // namespace allocation_record_test
} // namespace gua::e2e
