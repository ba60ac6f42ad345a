// SPDX-License-Identifier: Apache-2.0
// Merging NVML's and the kernel log's reports: one fault when both saw it (within the window, same
// card or its MIG instance, same code), a burst of N stays N, different codes or cards never
// merge, events settle after the window; and attribution: the kernel log's pid when it was on
// the card, else every holder of the card in the tick that holds the fault, nobody before.
#include "faults/merge.hpp"

#include <gtest/gtest.h>

namespace gua::faults {
namespace merge_test { // named after the file: unique in a unity batch

constexpr TimeUs k_t0 = 1778486400LL * k_us_per_second;
constexpr DurationUs k_s = k_us_per_second;

telemetry::FaultEvent nvml(const std::string& uuid, int xid, TimeUs at) {
    telemetry::FaultEvent e;
    e.uuid = uuid;
    e.xid = xid;
    e.at_us = at;
    e.sources = telemetry::fault_from_nvml;
    return e;
}

telemetry::FaultEvent kmsg(const std::string& uuid, int xid, TimeUs at, std::uint64_t seq,
                           std::optional<std::uint32_t> pid = std::nullopt) {
    telemetry::FaultEvent e = nvml(uuid, xid, at);
    e.sources = telemetry::fault_from_kmsg;
    e.kmsg_seq = seq;
    e.boot_id = "boot";
    e.pid = pid;
    e.process_name = pid ? "python3" : "";
    e.message = "channel 0x1e";
    e.pci_bus_id = "0000:3b:00";
    return e;
}

TEST(FaultMerger, BothSourcesMakeOneFault) {
    FaultMerger m;
    m.add({nvml("GPU-a", 43, k_t0 + 2 * k_s)});
    m.add({kmsg("GPU-a", 43, k_t0 + 2 * k_s - 3000, 7, 534)});
    const std::vector<telemetry::FaultEvent> out = m.take_settled(k_t0 + 3 * k_s);
    ASSERT_EQ(out.size(), 1U) << "a pair settles at once";
    EXPECT_EQ(out[0].sources, telemetry::fault_from_nvml | telemetry::fault_from_kmsg);
    EXPECT_EQ(out[0].at_us, k_t0 + 2 * k_s - 3000) << "the earlier time";
    EXPECT_EQ(out[0].pid, 534U);
    EXPECT_EQ(out[0].message, "channel 0x1e");
    EXPECT_EQ(out[0].kmsg_seq, 7U);
    EXPECT_EQ(m.pending(), 0U);
}

TEST(FaultMerger, ABurstStaysABurst) {
    FaultMerger m;
    std::vector<telemetry::FaultEvent> n;
    std::vector<telemetry::FaultEvent> k;
    for (int i = 0; i < 3; ++i) {
        n.push_back(nvml("GPU-a", 13, k_t0 + i * 100000));
        k.push_back(kmsg("GPU-a", 13, k_t0 + i * 100000 - 500, static_cast<std::uint64_t>(i)));
    }
    m.add(n);
    m.add(k);
    m.add({nvml("GPU-a", 13, k_t0 + 400000)}); // a fourth that only NVML saw
    const auto out = m.take_settled(k_t0 + 10 * k_s);
    ASSERT_EQ(out.size(), 4U);
    int both = 0;
    for (const auto& e : out) {
        both += e.sources == 3 ? 1 : 0;
    }
    EXPECT_EQ(both, 3);
}

TEST(FaultMerger, DifferentCodeCardOrTimeStayApart) {
    FaultMerger m;
    m.add({nvml("GPU-a", 43, k_t0), nvml("GPU-b", 79, k_t0), nvml("GPU-a", 31, k_t0)});
    m.add({kmsg("GPU-a", 31, k_t0 + 6 * k_s, 1), kmsg("GPU-c", 79, k_t0, 2),
           kmsg("GPU-a", 13, k_t0, 3)});
    EXPECT_TRUE(m.take_settled(k_t0 + 4 * k_s).empty()) << "still within the window";
    const auto out = m.take_settled(k_t0 + 20 * k_s);
    EXPECT_EQ(out.size(), 6U);
}

TEST(FaultMerger, AMigInstanceMatchesItsGpuAndKeepsTheInstance) {
    FaultMerger m;
    m.set_cards({{"MIG-1", 0, "", {}, "", "GPU-a"}, {"GPU-a", 0, "", {}, "", ""}});
    m.add({nvml("MIG-1", 31, k_t0)});
    telemetry::FaultEvent k = kmsg("GPU-a", 31, k_t0 + 1000, 4, 99);
    k.gpu_instance = 1;
    m.add({k});
    const auto out = m.take_all();
    ASSERT_EQ(out.size(), 1U);
    EXPECT_EQ(out[0].uuid, "MIG-1") << "NVML named the instance";
    EXPECT_EQ(out[0].pid, 99U);
}

telemetry::Tick tick_with(TimeUs t0, std::vector<std::pair<std::string, std::uint32_t>> procs) {
    telemetry::Tick t;
    t.t0 = t0;
    t.duration_us = 10 * k_s;
    for (const char* uuid : {"GPU-a", "GPU-b"}) {
        telemetry::CardTickRecord c;
        c.device.uuid = uuid;
        for (const auto& [on, pid] : procs) {
            if (on == uuid) {
                telemetry::ProcessTick p;
                p.pid = pid;
                p.identity.user = "user" + std::to_string(pid);
                p.identity.command = "cmd" + std::to_string(pid);
                c.processes.push_back(p);
            }
        }
        t.cards.push_back(c);
    }
    return t;
}

TEST(FaultAttributor, NamesTheFaultingProcessOrTheHolders) {
    FaultAttributor a;
    telemetry::FaultEvent before = nvml("GPU-a", 43, k_t0 - k_s);
    a.attribute(before);
    EXPECT_TRUE(before.holders.empty()) << "no tick yet: nobody is invented";
    a.on_tick(tick_with(k_t0, {{"GPU-a", 10}, {"GPU-a", 11}, {"GPU-b", 20}}));
    a.on_tick(tick_with(k_t0 + 10 * k_s, {{"GPU-a", 11}, {"GPU-b", 20}}));

    telemetry::FaultEvent by_pid = kmsg("GPU-a", 43, k_t0 + 12 * k_s, 1, 10);
    a.attribute(by_pid);
    ASSERT_EQ(by_pid.holders.size(), 1U) << "pid 10 was on GPU-a in the first tick";
    EXPECT_EQ(by_pid.holders[0].pid, 10U);
    ASSERT_TRUE(by_pid.holders[0].identity);
    EXPECT_EQ(by_pid.holders[0].identity->user, "user10");

    telemetry::FaultEvent in_first = nvml("GPU-a", 79, k_t0 + 3 * k_s);
    a.attribute(in_first);
    ASSERT_EQ(in_first.holders.size(), 2U) << "both holders of GPU-a in the tick of the fault";

    telemetry::FaultEvent stranger = kmsg("GPU-b", 31, k_t0 + 15 * k_s, 2, 999);
    a.attribute(stranger);
    ASSERT_EQ(stranger.holders.size(), 1U) << "pid 999 was never on GPU-b: its holders";
    EXPECT_EQ(stranger.holders[0].pid, 20U);

    telemetry::FaultEvent nowhere = kmsg("", 31, k_t0 + 15 * k_s, 3, 10);
    a.attribute(nowhere);
    EXPECT_TRUE(nowhere.holders.empty()) << "an unknown card has no holders";
}

} // namespace merge_test
} // namespace gua::faults
