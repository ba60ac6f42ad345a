// SPDX-License-Identifier: Apache-2.0
// End to end: the real daemon on the fake driver, with the fake writing the kernel log fixture.
// An application Xid 43 on card 0 (its process named by the log's pid), a hardware Xid 79 on
// card 1 (which is then lost) and an NVLink Xid 145 on card 2 are each stored once although both
// NVML and the kernel log report them, with the catalog's class in the log, the holder of the
// card, /metrics' counter per card and code (restored at the next start), and a second run over
// the same kernel log adds nothing.
#include "e2e/daemon_e2e.hpp"
#include "fleet/http_client.hpp"

#include <csignal>
#include <regex>
#include <unistd.h>

namespace gua::e2e {
namespace daemon_xid_test { // named after the file: unique in a unity batch

class DaemonXid : public DaemonTest {
  protected:
    DaemonXid() {
        write_atomically(config_path(), "[daemon]\nkernel_log = \"" + path("kmsg") + "\"\n");
        write_atomically(path("kmsg"), "");
        set_env("GUA_FAKE_NVML_KMSG_FILE", path("kmsg"));
    }
};

json three_cards_three_faults(int me) {
    return {{"devices",
             {{{"uuid", "GPU-app"}, {"pci_bus_id", "00000000:3B:00.0"}, {"util", {{0, 0}}}},
              {{"uuid", "GPU-bus"}, {"pci_bus_id", "00000000:5E:00.0"}, {"util", {{0, 50}}}},
              {{"uuid", "GPU-link"}, {"pci_bus_id", "00000000:86:00.0"}, {"util", {{0, 90}}}}}},
            {"processes", {holder(0, 8000, 0, me), holder(2, 4000, 90, me)}},
            {"events",
             {{{"device", 0},
               {"at", 4.0},
               {"xid", 43},
               {"pid", me},
               {"name", "gua_tests"},
               {"message", "channel 0x0000001e"}},
              {{"device", 1}, {"at", 4.5}, {"xid", 79}},
              {{"device", 2}, {"at", 5.0}, {"xid", 145}, {"message", "RLW_RXFRAME Fatal"}}}},
            {"faults", {{{"function", "*"}, {"device", 1}, {"from", 4.6}, {"error", 15}}}}};
}

std::uint16_t port_of(test::BackgroundProcess& daemon) {
    const std::regex serving(R"(serving Prometheus metrics on http://127\.0\.0\.1:(\d+)/)");
    std::uint16_t port = 0;
    test::poll_until(
        [&] {
            std::smatch match;
            const std::string text = daemon.err();
            if (std::regex_search(text, match, serving)) {
                port = static_cast<std::uint16_t>(std::stoi(match[1]));
            }
            return port != 0;
        },
        15s);
    return port;
}

TEST_F(DaemonXid, EachFaultOnceWithItsCardAndHolder) {
    const int me = static_cast<int>(getpid());
    write_scenario(three_cards_three_faults(me));
    auto daemon = start_daemon({"--interval", "250ms", "--listen", "127.0.0.1:0"});
    const std::uint16_t port = port_of(*daemon);
    ASSERT_NE(port, 0) << daemon->err();
    ASSERT_TRUE(daemon->wait_for("Xid 145 on GPU-link", 20s)) << daemon->err();
    EXPECT_NE(daemon->err().find("NVML events: Xid on 3 of 3 GPUs"), std::string::npos)
        << daemon->err();
    EXPECT_NE(daemon->err().find("kernel log: reading Xid lines from " + path("kmsg")),
              std::string::npos);
    EXPECT_NE(daemon->err().find("Xid 43 on GPU-app (the GPU stopped the program's channel"),
              std::string::npos)
        << daemon->err();
    EXPECT_NE(daemon->err().find("application)"), std::string::npos);
    EXPECT_NE(daemon->err().find("Xid 79 on GPU-bus (the GPU has fallen off the bus; hardware)"),
              std::string::npos);
    ASSERT_TRUE(test::poll_until(
        [&] {
            return fleet_testing::http_get(port, "/metrics")
                       .body.find("gua_gpu_xid_events_total{gpu=\"2\",uuid=\"GPU-link\","
                                  "code=\"145\"} 1") != std::string::npos;
        },
        5s));
    const std::string metrics = fleet_testing::http_get(port, "/metrics").body;
    EXPECT_NE(metrics.find("gua_gpu_xid_events_total{gpu=\"0\",uuid=\"GPU-app\",code=\"43\"} 1"),
              std::string::npos)
        << metrics;
    EXPECT_NE(metrics.find("gua_gpu_xid_events_total{gpu=\"1\",uuid=\"GPU-bus\",code=\"79\"} 1"),
              std::string::npos)
        << metrics;
    daemon->signal(SIGTERM);
    ASSERT_TRUE(daemon->wait_exit(10s).has_value());

    test::RawDb raw(db());
    EXPECT_EQ(raw.one("SELECT group_concat(gpu_uuid || ':' || xid || ':' || sources, ' ') FROM "
                      "(SELECT * FROM fault_event ORDER BY at_us)"),
              "GPU-app:43:3 GPU-bus:79:3 GPU-link:145:3")
        << "three faults, each seen by NVML and the kernel log, stored once";
    EXPECT_EQ(raw.one("SELECT pid || ' ' || process_name || ' ' || message FROM fault_event "
                      "WHERE xid = 43"),
              std::to_string(me) + " gua_tests channel 0x0000001e");
    const std::string holders = raw.one("SELECT holders FROM fault_event WHERE xid = 43");
    const json h = json::parse(holders);
    ASSERT_EQ(h.size(), 1U) << holders;
    EXPECT_EQ(h[0]["pid"], me);
    EXPECT_EQ(raw.one("SELECT holders FROM fault_event WHERE xid = 79"), "[]")
        << "nobody held card 1";
    EXPECT_EQ(raw.one("SELECT json_array_length(holders) FROM fault_event WHERE xid = 145"), "1");
    EXPECT_EQ(raw.one("SELECT count(DISTINCT kmsg_seq) FROM fault_event"), "3");

    // A second run of this boot reads the same kernel log from the start: nothing is added, and
    // /metrics resumes from the database.
    json quiet = three_cards_three_faults(me);
    quiet.erase("events");
    write_scenario(quiet);
    auto again = start_daemon({"--interval", "250ms", "--listen", "127.0.0.1:0"},
                              FakeVariant::modern, "again");
    const std::uint16_t second = port_of(*again);
    ASSERT_NE(second, 0) << again->err();
    ASSERT_TRUE(again->wait_for("tick 4", 10s)) << again->err();
    const std::string restored = fleet_testing::http_get(second, "/metrics").body;
    EXPECT_NE(restored.find("gua_gpu_xid_events_total{gpu=\"0\",uuid=\"GPU-app\",code=\"43\"} 1"),
              std::string::npos)
        << restored;
    again->signal(SIGTERM);
    ASSERT_TRUE(again->wait_exit(10s).has_value());
    EXPECT_EQ(raw.one("SELECT count(*) FROM fault_event"), "3");
}

TEST_F(DaemonXid, KernelLogOnlyAndNvmlOnlyAreCountedOnce) {
    const int me = static_cast<int>(getpid());
    json scenario = three_cards_three_faults(me);
    scenario.erase("faults");
    scenario["events"] = {{{"device", 0}, {"at", 4.0}, {"xid", 13}, {"sources", {"kmsg"}}},
                          {{"device", 2}, {"at", 4.0}, {"xid", 31}, {"sources", {"nvml"}}}};
    write_scenario(scenario);
    const test::RunResult r = run_daemon({"--interval", "250ms", "--ticks", "40"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    test::RawDb raw(db());
    EXPECT_EQ(raw.one("SELECT group_concat(gpu_uuid || ':' || xid || ':' || sources, ' ') FROM "
                      "(SELECT * FROM fault_event ORDER BY gpu_uuid)"),
              "GPU-app:13:2 GPU-link:31:1");
}

TEST_F(DaemonXid, WithoutTheKernelLogNvmlAloneRecords) {
    write_atomically(config_path(), "[daemon]\nkernel_log = \"\"\n");
    const int me = static_cast<int>(getpid());
    json scenario = three_cards_three_faults(me);
    scenario.erase("faults");
    write_scenario(scenario);
    const test::RunResult r = run_daemon({"--interval", "250ms", "--ticks", "40"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err.find("kernel log:"), std::string::npos) << r.err;
    test::RawDb raw(db());
    EXPECT_EQ(raw.one("SELECT group_concat(xid || ':' || sources, ' ') FROM "
                      "(SELECT * FROM fault_event ORDER BY at_us)"),
              "43:1 79:1 145:1");
}

TEST_F(DaemonXid, AFaultOnAMigInstanceNamesTheInstanceAndItsHolder) {
    const int me = static_cast<int>(getpid());
    const json scenario = {
        {"devices",
         {{{"uuid", "GPU-mig"},
           {"pci_bus_id", "00000000:3B:00.0"},
           {"mig", true},
           {"mig_instances",
            {{{"uuid", "MIG-one"}, {"gpu_instance_id", 1}, {"compute_instance_id", 0}},
             {{"uuid", "MIG-two"}, {"gpu_instance_id", 2}, {"compute_instance_id", 0}}}}}}},
        {"processes",
         {{{"device", 0}, {"mig_instance", 1}, {"pid", me}, {"memory_mib", {{0, 4000}}}}}},
        {"events",
         {{{"device", 0},
           {"at", 4.0},
           {"xid", 31},
           {"mig_instance", 1},
           {"pid", me},
           {"name", "gua_tests"}}}}};
    write_scenario(scenario);
    const test::RunResult r = run_daemon({"--interval", "250ms", "--ticks", "40"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    test::RawDb raw(db());
    EXPECT_EQ(raw.one("SELECT group_concat(gpu_uuid || ':' || sources || ':' || gpu_instance_id "
                      "|| ':' || compute_instance_id, ' ') FROM fault_event"),
              "MIG-two:3:2:0")
        << "both sources, one fault, on the instance (GI 2 is the second)";
    EXPECT_EQ(raw.one("SELECT json_extract(holders, '$[0].pid') FROM fault_event"),
              std::to_string(me));
}

} // namespace daemon_xid_test
} // namespace gua::e2e
