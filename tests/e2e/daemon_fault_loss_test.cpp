// SPDX-License-Identifier: Apache-2.0
// End to end: card-time lost to faults. The real daemon on the fake driver, both Xid sources on
// (NVML events and the kernel log fixture); three cards held idle by this test's process: a
// hardware Xid 79 on card 0 (which is then lost), an application Xid 43 on card 1 and an
// NVLink Xid 145 on card 2. The report counts the held time after 79 and 145 as lost to faults,
// outside idle-held, the identity's and the waste's; card 1's stays idle-held and billed.
#include "e2e/daemon_e2e.hpp"

#include <array>
#include <map>
#include <pwd.h>
#include <string>
#include <unistd.h>

namespace gua::e2e {
namespace daemon_fault_loss_test { // named after the file: unique in a unity batch

class DaemonFaultLoss : public DaemonTest {
  protected:
    DaemonFaultLoss() {
        write_atomically(config_path(), "[daemon]\nkernel_log = \"" + path("kmsg") + "\"\n");
        write_atomically(path("kmsg"), "");
        set_env("GUA_FAKE_NVML_KMSG_FILE", path("kmsg"));
    }

    /// The stored time of the one fault of code `xid` (seconds since the epoch).
    double fault_at(int xid) const {
        test::RawDb raw(db());
        return std::stod(
                   raw.one("SELECT at_us FROM fault_event WHERE xid = " + std::to_string(xid))) /
               1e6;
    }

    /// Card `index`'s measured seconds from `from` (epoch seconds) on, tick by tick: the part
    /// of each card-tick after `from`, times the tick's measured share. Held idle throughout,
    /// this is the held time after a fault.
    double measured_after(int index, double from) const {
        test::RawDb raw(db());
        const std::string s = raw.one(
            "SELECT sum(max(0, c.t0_us + c.duration_us - max(c.t0_us, " +
            std::to_string(static_cast<std::int64_t>(from * 1e6)) +
            ")) * 1.0 * (c.duration_us - c.unmeasured_us) / c.duration_us) FROM card_tick c JOIN "
            "gpu g ON g.id = c.gpu_id WHERE g.idx = " +
            std::to_string(index));
        return s.empty() || s == "NULL" ? 0.0 : std::stod(s) / 1e6;
    }
};

json three_held_cards(int me) {
    return {{"devices",
             {{{"uuid", "GPU-bus"}, {"pci_bus_id", "00000000:3B:00.0"}, {"util", {{0, 0}}}},
              {{"uuid", "GPU-app"}, {"pci_bus_id", "00000000:5E:00.0"}, {"util", {{0, 0}}}},
              {{"uuid", "GPU-link"}, {"pci_bus_id", "00000000:86:00.0"}, {"util", {{0, 0}}}}}},
            {"processes", {holder(0, 8000, 0, me), holder(1, 8000, 0, me), holder(2, 8000, 0, me)}},
            {"events",
             {{{"device", 0}, {"at", 2.0}, {"xid", 79}},
              {{"device", 1}, {"at", 2.0}, {"xid", 43}, {"pid", me}, {"name", "gua_tests"}},
              {{"device", 2}, {"at", 3.0}, {"xid", 145}, {"message", "RLW_RXFRAME Fatal"}}}},
            {"faults", {{{"function", "*"}, {"device", 0}, {"from", 4.5}, {"error", 15}}}}};
}

double seconds(const json& hours) {
    return hours.get<double>() * 3600.0;
}

double lost_seconds(const json& states) {
    return seconds(states.value("lost_to_faults_gpu_hours", json(0.0)));
}

TEST_F(DaemonFaultLoss, HeldTimeAfterAHardwareOrLinkFaultIsNotBilled) {
    const int me = static_cast<int>(getpid());
    write_scenario(three_held_cards(me));
    const test::RunResult r = run_daemon({"--interval", "250ms", "--ticks", "28"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    test::RawDb raw(db());
    ASSERT_EQ(raw.one("SELECT group_concat(gpu_uuid || ':' || xid || ':' || sources, ' ') FROM "
                      "(SELECT * FROM fault_event ORDER BY xid)"),
              "GPU-app:43:3 GPU-bus:79:3 GPU-link:145:3")
        << "each fault stored once although both sources saw it";

    const json rep = report();
    // Each card was held idle from start to end: its measured time after a stranding fault is
    // lost, the rest idle-held. Card 0 was lost at 4.5 s: its later time is unmeasured.
    const double lost0 = measured_after(0, fault_at(79));
    const double lost2 = measured_after(2, fault_at(145));
    ASSERT_GT(lost0, 0.5) << "card 0 held time after Xid 79 and before it was lost";
    ASSERT_GT(lost2, 1.0);
    RecordProperty("lost_after_xid79_s", std::to_string(lost0));
    RecordProperty("lost_after_xid145_s", std::to_string(lost2));
    const std::array<double, 3> lost{lost0, 0.0, lost2};
    double idle_held_sum = 0;
    for (int gpu = 0; gpu < 3; ++gpu) {
        const json states = gpu_row(rep, gpu)["states"];
        EXPECT_NEAR(lost_seconds(states), lost[gpu], 0.01) << gpu;
        EXPECT_NEAR(seconds(states["idle_held_gpu_hours"]), measured_seconds(gpu) - lost[gpu], 0.01)
            << gpu;
        EXPECT_NEAR(seconds(states["active_gpu_hours"]) + seconds(states["idle_held_gpu_hours"]) +
                        lost_seconds(states) + seconds(states["truly_idle_gpu_hours"]) +
                        seconds(states["unmeasured_gpu_hours"]),
                    recorded_seconds(gpu), 0.01)
            << "card " << gpu << "'s states add up to its recorded time";
        idle_held_sum += measured_seconds(gpu) - lost[gpu];
    }
    EXPECT_FALSE(gpu_row(rep, 1)["states"].contains("lost_to_faults_gpu_hours"))
        << "an application fault leaves the time idle-held";
    EXPECT_NEAR(lost_seconds(rep["headline"]), lost0 + lost2, 0.01);
    EXPECT_NEAR(seconds(rep["waste"]["idle_held_gpu_hours"]), idle_held_sum, 0.01);
    EXPECT_NEAR(seconds(rep["waste"]["lost_to_faults_gpu_hours"]), lost0 + lost2, 0.01);
    const json mine = identity_row(rep, getpwuid(getuid())->pw_name);
    EXPECT_NEAR(seconds(mine["idle_held_gpu_hours"]), idle_held_sum, 0.01)
        << "the holder is billed for card 1's idle-held time, not for the lost time";

    // §9 says what each fault cost: the stranding ones name the lost time, Xid 43 does not.
    std::map<std::string, std::string> findings; // "id gpu" -> detail
    for (const json& f : rep["health"]["findings"]) {
        findings[f["id"].get<std::string>() + " " + std::to_string(f["gpu"].get<int>())] =
            f["detail"].get<std::string>();
    }
    EXPECT_NE(findings["xid-hardware 0"].find("is lost to faults, not idle-held"),
              std::string::npos)
        << findings["xid-hardware 0"];
    EXPECT_NE(findings["xid-interconnect 2"].find("is lost to faults"), std::string::npos);
    EXPECT_EQ(findings["xid-application 1"].find("lost to faults"), std::string::npos);
    EXPECT_FALSE(findings["xid-application 1"].empty());

    const test::RunResult text = test::run_gua({"report", "--db", db(), "--since", "1d"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("fault-lost"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("GPU 0: "), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("GPU 1: "), std::string::npos) << text.out;
    const test::RunResult html =
        test::run_gua({"report", "--db", db(), "--since", "1d", "--format", "html"});
    ASSERT_EQ(html.exit_code, 0) << html.err;
    EXPECT_NE(html.out.find("data-field=\"waste.lost_to_faults_gpu_hours\""), std::string::npos);
}

TEST_F(DaemonFaultLoss, WithoutStrandingFaultsTheReportHasNoLostTime) {
    const int me = static_cast<int>(getpid());
    json scenario = three_held_cards(me);
    scenario["events"] = {{{"device", 0}, {"at", 2.0}, {"xid", 13}, {"sources", {"kmsg"}}}};
    scenario.erase("faults");
    write_scenario(scenario);
    const test::RunResult r = run_daemon({"--interval", "250ms", "--ticks", "16"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json rep = report();
    EXPECT_FALSE(rep["headline"].contains("lost_to_faults_gpu_hours"));
    EXPECT_FALSE(rep["waste"].contains("lost_to_faults_gpu_hours"));
    EXPECT_NEAR(seconds(gpu_row(rep, 0)["states"]["idle_held_gpu_hours"]), measured_seconds(0),
                0.01);
}

} // namespace daemon_fault_loss_test
} // namespace gua::e2e
