// SPDX-License-Identifier: Apache-2.0
// The fault table: events stored and read back field for field (holders included), a kernel log
// record stored once per boot, the newest stored sequence number per boot, counts per card and
// code; and §9's findings built from it by the report (catalog text, holders, card index).
#include "report/build.hpp"
#include "report/build_faults.hpp"
#include "store/faults.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace gua::store {
namespace faults_store_test { // named after the file: unique in a unity batch

constexpr TimeUs k_t0 = 1778486400LL * k_us_per_second;
constexpr DurationUs k_s = k_us_per_second;

telemetry::FaultEvent event(const std::string& uuid, int xid, TimeUs at,
                            std::optional<std::uint64_t> seq = std::nullopt) {
    telemetry::FaultEvent e;
    e.uuid = uuid;
    e.xid = xid;
    e.at_us = at;
    e.sources = seq ? 3U : 1U;
    if (seq) {
        e.boot_id = "boot-a";
        e.kmsg_seq = seq;
        e.pid = 534;
        e.process_name = "python3";
        e.message = "channel 0x1e";
        e.pci_bus_id = "0000:3b:00";
    }
    return e;
}

TEST(FaultStore, StoresReadsAndKeepsAKernelRecordOnce) {
    test::TempDir dir;
    Database db(dir.file("f.db"), OpenMode::create);
    migrate(db);
    telemetry::FaultEvent app = event("GPU-a", 43, k_t0 + 10 * k_s, 7);
    telemetry::Identity alice;
    alice.user = "alice";
    alice.slurm_job = "4242";
    app.holders = {{534, "python3", alice}, {99, "", std::nullopt}};
    app.gpu_instance = 3;
    app.compute_instance = 0;
    const std::int64_t run1 = Writer(db, RunInfo{"host", "560.35.05", "nvml", k_s}).run_id();
    const std::int64_t run2 = Writer(db, RunInfo{"host", "560.35.05", "nvml", k_s}).run_id();
    const std::vector<bool> stored =
        insert_faults(db, run1, {app, event("GPU-b", 79, k_t0 + 20 * k_s), event("GPU-a", 43, 5)});
    EXPECT_EQ(stored, (std::vector<bool>{true, true, true}));
    EXPECT_EQ(insert_faults(db, run2, {app}), std::vector<bool>{false}) << "same boot and seq";
    app.boot_id = "boot-b";
    EXPECT_EQ(insert_faults(db, run2, {app}), std::vector<bool>{true}) << "another boot";

    EXPECT_EQ(last_kmsg_seq(db, "boot-a"), 7U);
    EXPECT_FALSE(last_kmsg_seq(db, "boot-c").has_value());

    const std::vector<telemetry::FaultEvent> window = read_faults(db, k_t0, k_t0 + 15 * k_s);
    ASSERT_EQ(window.size(), 2U);
    const telemetry::FaultEvent& r = window[0];
    EXPECT_EQ(r.uuid, "GPU-a");
    EXPECT_EQ(r.xid, 43);
    EXPECT_EQ(r.at_us, k_t0 + 10 * k_s);
    EXPECT_EQ(r.sources, 3U);
    EXPECT_EQ(r.pid, 534U);
    EXPECT_EQ(r.process_name, "python3");
    EXPECT_EQ(r.message, "channel 0x1e");
    EXPECT_EQ(r.pci_bus_id, "0000:3b:00");
    EXPECT_EQ(r.gpu_instance, 3U);
    EXPECT_EQ(r.compute_instance, 0U);
    EXPECT_EQ(r.boot_id, "boot-a");
    EXPECT_EQ(r.kmsg_seq, 7U);
    ASSERT_EQ(r.holders.size(), 2U);
    EXPECT_EQ(r.holders[0].pid, 534U);
    ASSERT_TRUE(r.holders[0].identity);
    EXPECT_EQ(r.holders[0].identity->user, "alice");
    EXPECT_EQ(r.holders[0].identity->slurm_job, "4242");
    EXPECT_FALSE(r.holders[1].identity) << "no identity stays none";

    const auto counts = fault_counts(db);
    EXPECT_EQ(counts.at({"GPU-a", 43}), 3U);
    EXPECT_EQ(counts.at({"GPU-b", 79}), 1U);
}

TEST(FaultStore, ReportSectionNineListsTheFaultsWithTheCatalog) {
    test::TempDir dir;
    Database db(dir.file("f.db"), OpenMode::create);
    migrate(db);
    {
        Writer w(db, RunInfo{"host", "560.35.05", "nvml", 10 * k_s, 10.0, k_t0});
        telemetry::Tick t;
        t.t0 = k_t0;
        t.duration_us = 10 * k_s;
        for (int i = 0; i < 2; ++i) {
            telemetry::CardTickRecord c;
            c.device.uuid = i == 0 ? "GPU-a" : "GPU-b";
            c.device.index = i;
            c.util_source = telemetry::UtilSource::snapshot;
            c.util_pct = 50;
            c.active_us = 10 * k_s;
            t.cards.push_back(c);
        }
        w.write(t);
        w.finish(k_t0 + 10 * k_s);
    }
    telemetry::FaultEvent app = event("GPU-a", 43, k_t0 + 2 * k_s, 7);
    telemetry::Identity alice;
    alice.user = "alice";
    app.holders = {{534, "python3", alice}};
    static_cast<void>(insert_faults(
        db, 1, {app, event("GPU-b", 79, k_t0 + 3 * k_s), event("GPU-b", 79, k_t0 + 4 * k_s)}));
    report::BuildOptions options;
    options.from = k_t0;
    options.to = k_t0 + 10 * k_s;
    const report::ReportModel m = report::build_report(db, options, TimeZone::load("UTC").value());
    ASSERT_TRUE(m.health);
    std::vector<const audit::HealthFinding*> xids;
    for (const audit::HealthFinding& f : m.health->findings) {
        if (f.id.starts_with("xid-")) {
            xids.push_back(&f);
        }
    }
    ASSERT_EQ(xids.size(), 2U);
    EXPECT_EQ(xids[0]->id, "xid-application");
    EXPECT_EQ(xids[0]->gpu, 0);
    EXPECT_NE(xids[0]->detail.find("Xid 43 ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR at "
                                   "2026-05-11T08:00:02Z (from NVML and the kernel log)"),
              std::string::npos)
        << xids[0]->detail;
    EXPECT_NE(xids[0]->detail.find("on the card: alice (python3, pid 534)"), std::string::npos)
        << xids[0]->detail;
    EXPECT_NE(xids[0]->detail.find("do: check the program"), std::string::npos);
    EXPECT_EQ(xids[1]->id, "xid-hardware");
    EXPECT_EQ(xids[1]->gpu, 1);
    EXPECT_NE(xids[1]->detail.find("Xid 79 ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS 2 times"),
              std::string::npos)
        << xids[1]->detail;
    EXPECT_NE(xids[1]->detail.find("no process listed on the card"), std::string::npos);
    std::vector<std::string> remedies;
    for (const report::HealthRemedy& r : m.health->remedies) {
        remedies.push_back(r.id);
    }
    EXPECT_NE(std::find(remedies.begin(), remedies.end(), "xid-application"), remedies.end());
    EXPECT_NE(std::find(remedies.begin(), remedies.end(), "xid-hardware"), remedies.end())
        << "§8 gains one remedy per class";
}

TEST(FaultStore, AnOlderFileHasNoFaultsAndNoError) {
    test::TempDir dir;
    Database db(dir.file("old.db"), OpenMode::create);
    migrate_to(db, 14);
    EXPECT_TRUE(read_faults(db, 0, k_t0).empty());
    EXPECT_TRUE(fault_counts(db).empty());
}

} // namespace faults_store_test
} // namespace gua::store
