// SPDX-License-Identifier: Apache-2.0
// A GPU the PCI bus lists (a sysfs fixture) that NVML cannot open: recorded once per loss by the
// daemon's watch at the first tick and when the count of cards changes, under the uuid the
// database knew at that address; stored with gua's own code, left out of the Xid counters and
// listed by §9 with its address and time; and end to end, the real daemon on the fake driver.
#include "audit/fault_findings.hpp"
#include "daemon/missing_gpus.hpp"
#include "e2e/daemon_e2e.hpp"
#include "faults/catalog.hpp"
#include "store/faults.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace gua::daemon {
namespace missing_gpus_test { // named after the file: unique in a unity batch

constexpr TimeUs k_t0 = 1778486400LL * k_us_per_second; // 2026-05-11T08:00:00Z
constexpr DurationUs k_tick = 10 * k_us_per_second;

void device(const std::string& dir, const std::string& id, const std::string& vendor,
            const std::string& cls) {
    const std::filesystem::path p = std::filesystem::path(dir) / id;
    std::filesystem::create_directories(p);
    std::ofstream(p / "vendor") << vendor << "\n";
    std::ofstream(p / "class") << cls << "\n";
}

/// Three NVIDIA GPUs (3b, 5e, 86), an NVSwitch bridge and another vendor's VGA card.
void bus(const std::string& dir) {
    device(dir, "0000:3b:00.0", "0x10de", "0x030200");
    device(dir, "0000:5e:00.0", "0x10de", "0x030200");
    device(dir, "0000:86:00.0", "0x10de", "0x030000");
    device(dir, "0000:07:00.0", "0x10de", "0x068000");
    device(dir, "0000:01:00.0", "0x1002", "0x030000");
}

telemetry::DeviceInfo info(const std::string& uuid, const std::string& bus_id) {
    telemetry::DeviceInfo d;
    d.uuid = uuid;
    d.pci_bus_id = bus_id;
    return d;
}

/// Tick `k` with cards named by (uuid, NVML bus id); `lost` among them fell off the bus.
telemetry::Tick tick(int k, const std::vector<telemetry::DeviceInfo>& cards,
                     std::vector<std::string> lost = {}) {
    telemetry::Tick t;
    t.seq = static_cast<std::uint64_t>(k);
    t.t0 = k_t0 + k * k_tick;
    t.duration_us = k_tick;
    for (const telemetry::DeviceInfo& d : cards) {
        telemetry::CardTickRecord c;
        c.device = d;
        t.cards.push_back(c);
    }
    t.lost_uuids = std::move(lost);
    return t;
}

const telemetry::DeviceInfo k_a = info("GPU-a", "00000000:3B:00.0");
const telemetry::DeviceInfo k_b = info("GPU-b", "00000000:5E:00.0");
const telemetry::DeviceInfo k_c = info("GPU-c", "00000000:86:00.0");

TEST(MissingGpus, ReportedOncePerLossUnderTheKnownUuid) {
    test::TempDir tmp;
    bus(tmp.file("devices"));
    MissingGpuWatch watch(tmp.file("devices"), {k_a, k_b, k_c});

    std::vector<telemetry::FaultEvent> first = watch.on_tick(tick(0, {k_a, k_c}));
    ASSERT_EQ(first.size(), 1U);
    EXPECT_EQ(first[0].pci_bus_id, "0000:5e:00.0");
    EXPECT_EQ(first[0].uuid, "GPU-b") << "the database's card at that address";
    EXPECT_EQ(first[0].xid, faults::k_gpu_missing_code);
    EXPECT_EQ(first[0].at_us, k_t0 + k_tick) << "the end of the tick that saw it";
    EXPECT_EQ(first[0].sources, 0U) << "neither NVML nor the kernel log";

    EXPECT_TRUE(watch.on_tick(tick(1, {k_a, k_c})).empty()) << "same cards: not read again";
    EXPECT_TRUE(watch.on_tick(tick(2, {k_a, k_b, k_c})).empty()) << "back: nothing missing";
    // GPU-c falls off the bus: still in the tick, as lost; then GPU-b goes again.
    std::vector<telemetry::FaultEvent> lost = watch.on_tick(tick(3, {k_a, k_b, k_c}, {"GPU-c"}));
    ASSERT_EQ(lost.size(), 1U);
    EXPECT_EQ(lost[0].pci_bus_id, "0000:86:00.0");
    EXPECT_EQ(lost[0].uuid, "GPU-c");
    EXPECT_EQ(lost[0].at_us, k_t0 + 4 * k_tick);
    std::vector<telemetry::FaultEvent> both = watch.on_tick(tick(4, {k_a}));
    ASSERT_EQ(both.size(), 1U) << "GPU-c was already reported and never came back";
    EXPECT_EQ(both[0].pci_bus_id, "0000:5e:00.0") << "GPU-b came back in between: a new loss";
}

TEST(MissingGpus, NothingWhenTheCardsCannotBeMatchedOrAreAllThere) {
    test::TempDir tmp;
    bus(tmp.file("devices"));
    MissingGpuWatch unknown(tmp.file("devices"), {});
    const std::vector<telemetry::FaultEvent> none =
        unknown.on_tick(tick(0, {k_a, info("MIG-1", "")}));
    EXPECT_TRUE(none.empty()) << "a card without an address: no card-by-card match";

    MissingGpuWatch fake(tmp.file("devices"), {});
    EXPECT_TRUE(
        fake.on_tick(tick(0, {info("GPU-x", "00000000:10:00.0"), info("GPU-y", "00000000:11:00.0"),
                              info("GPU-z", "00000000:12:00.0")}))
            .empty())
        << "as many working cards as GPUs on the bus (a fake or virtual driver's addresses)";

    MissingGpuWatch no_record(tmp.file("devices"), {});
    const std::vector<telemetry::FaultEvent> unnamed = no_record.on_tick(tick(0, {k_a, k_c}));
    ASSERT_EQ(unnamed.size(), 1U);
    EXPECT_EQ(unnamed[0].uuid, "") << "never recorded: no uuid is invented";

    MissingGpuWatch empty_bus(tmp.file("nowhere"), {});
    EXPECT_TRUE(empty_bus.on_tick(tick(0, {})).empty());
}

TEST(MissingGpus, StoredApartFromTheXidCountersAndListedInSection9) {
    test::TempDir tmp;
    bus(tmp.file("devices"));
    MissingGpuWatch watch(tmp.file("devices"), {k_a, k_b, k_c});
    std::vector<telemetry::FaultEvent> events = watch.on_tick(tick(0, {k_a, k_c}));
    telemetry::FaultEvent xid;
    xid.uuid = "GPU-b";
    xid.xid = 79;
    xid.at_us = k_t0 + 5 * k_us_per_second;
    xid.sources = telemetry::fault_from_nvml;
    events.insert(events.begin(), xid);

    store::Database db(tmp.file("f.db"), store::OpenMode::create);
    store::migrate(db);
    const std::int64_t run =
        store::Writer(db, store::RunInfo{"host", "560.35.05", "nvml", k_tick}).run_id();
    EXPECT_EQ(store::insert_faults(db, run, events), (std::vector<bool>{true, true}));
    const std::vector<telemetry::FaultEvent> back = store::read_faults(db, k_t0, k_t0 + k_tick + 1);
    ASSERT_EQ(back.size(), 2U);
    EXPECT_EQ(back[1].xid, faults::k_gpu_missing_code);
    EXPECT_EQ(back[1].pci_bus_id, "0000:5e:00.0");
    const auto counts = store::fault_counts(db);
    EXPECT_EQ(counts.size(), 1U) << "only the Xid is counted for /metrics";
    EXPECT_EQ(counts.count({"GPU-b", 79}), 1U);

    std::vector<audit::HealthFinding> findings;
    audit::add_fault_findings(1, back, findings);
    ASSERT_EQ(findings.size(), 2U);
    const auto missing =
        std::find_if(findings.begin(), findings.end(), [](const audit::HealthFinding& f) {
            return f.detail.find("PCI 0000:5e") != std::string::npos;
        });
    ASSERT_NE(missing, findings.end());
    EXPECT_EQ(missing->id, "xid-hardware") << "§8's hardware remedy: drain, reset, reseat";
    EXPECT_EQ(missing->gpu, 1);
    EXPECT_EQ(missing->detail.rfind("GPU at PCI 0000:5e:00.0 is on the bus but the driver cannot "
                                    "open it, seen at 2026-05-11T08:00:10Z",
                                    0),
              0U)
        << missing->detail;
}

} // namespace missing_gpus_test
} // namespace gua::daemon

namespace gua::e2e {
namespace missing_gpus_test {

class DaemonE2EMissingGpu : public DaemonTest {};

// The fake driver shows the GPUs at 3b and 86; the bus also lists 5e: the daemon records it at
// its first tick and the report's §9 names it.
TEST_F(DaemonE2EMissingGpu, TheReportListsTheGpuNvmlCannotOpen) {
    gua::daemon::missing_gpus_test::bus(path("sys/bus/pci/devices"));
    write_scenario(
        {{"devices",
          {{{"pci_bus_id", "00000000:3B:00.0"}}, {{"pci_bus_id", "00000000:86:00.0"}}}}});
    set_env("GUA_TEST_SYSFS_ROOT", path("sys"));
    set_env("NVIDIA_VISIBLE_DEVICES", "");
    const test::RunResult r = run_daemon({"--interval", "200ms", "--ticks", "3"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("WARNING: the GPU at PCI 0000:5e:00.0 is on the bus but NVML cannot open"),
              std::string::npos)
        << r.err;
    test::RawDb raw(db());
    EXPECT_EQ(raw.one("SELECT count(*) FROM fault_event"), "1");
    EXPECT_EQ(raw.one("SELECT pci_bus_id || ' ' || xid FROM fault_event"), "0000:5e:00.0 -1");
    const json j = report();
    bool found = false;
    for (const json& f : j.at("health").at("findings")) {
        const std::string text = f.dump();
        if (text.find("GPU at PCI 0000:5e:00.0 is on the bus but the driver cannot open it") !=
            std::string::npos) {
            found = true;
        }
    }
    EXPECT_TRUE(found) << j.at("health").at("findings").dump(2);
}

} // namespace missing_gpus_test
} // namespace gua::e2e
