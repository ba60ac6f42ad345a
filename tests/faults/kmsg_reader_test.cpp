// SPDX-License-Identifier: Apache-2.0
// The kernel log reader on a fixture file: Xid lines become events on the right card (by the
// cards' PCI addresses or the log's own "GPU at PCI" line), records already stored are skipped,
// lines appended later are read (the file is tailed), a "fallen off the bus" line is an Xid 79
// once, and an unreadable path says why.
#include "faults/kmsg_reader.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

namespace gua::faults {
namespace kmsg_reader_test { // named after the file: unique in a unity batch

using namespace std::chrono_literals;

std::vector<telemetry::FaultEvent> wait_for(KmsgReader& r, std::size_t n) {
    std::vector<telemetry::FaultEvent> out;
    const auto deadline = std::chrono::steady_clock::now() + 3s;
    while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
        r.drain(out);
        std::this_thread::sleep_for(10ms);
    }
    std::this_thread::sleep_for(300ms); // and nothing more comes
    r.drain(out);
    return out;
}

TEST(KmsgReader, ReadsXidsSkipsStoredOnesAndTailsTheFile) {
    test::TempDir dir;
    const std::string log = dir.file("kmsg");
    std::ofstream(log) << "6,1,100,-;Linux version 6.1\n"
                          "4,2,200,-;NVRM: Xid (PCI:0000:3b:00): 13, pid=5, name=old, x\n"
                          "4,3,300,-;NVRM: Xid (PCI:0000:3b:00): 43, pid=534, name=python3, ch\n"
                          " SUBSYSTEM=pci\n"
                          "4,4,400,-;NVRM: GPU at PCI:0000:5e:00: GPU-from-log\n"
                          "4,5,500,-;NVRM: Xid (PCI:0000:5e:00): 31, pid=9, name=t, fault\n";
    KmsgOptions o;
    o.path = log;
    o.boot_id = "b-1";
    o.after_seq = 2;
    telemetry::DeviceInfo card;
    card.uuid = "GPU-3b";
    card.pci_bus_id = "00000000:3B:00.0";
    o.cards = {card};
    KmsgReader reader(o);
    ASSERT_TRUE(reader.readable()) << reader.describe();
    std::vector<telemetry::FaultEvent> events = wait_for(reader, 2);
    ASSERT_EQ(events.size(), 2U) << "seq 2 was stored before";
    EXPECT_EQ(events[0].uuid, "GPU-3b");
    EXPECT_EQ(events[0].xid, 43);
    EXPECT_EQ(events[0].pid, 534U);
    EXPECT_EQ(events[0].process_name, "python3");
    EXPECT_EQ(events[0].sources, telemetry::fault_from_kmsg);
    EXPECT_EQ(events[0].boot_id, "b-1");
    EXPECT_EQ(events[0].kmsg_seq, 3U);
    EXPECT_EQ(events[0].pci_bus_id, "0000:3b:00");
    EXPECT_EQ(events[1].uuid, "GPU-from-log");
    EXPECT_EQ(events[1].xid, 31);

    std::ofstream(log, std::ios::app)
        << "4,6,600,-;NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.\n"
           "4,7,601,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off\n"
           "4,8,700,-;NVRM: The NVIDIA GPU 0000:5e:00.0\n"
           "4,9,700,-;NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
           "4,10,700,-;NVRM: fallen off the bus and is not responding to commands.\n";
    events = wait_for(reader, 2);
    ASSERT_EQ(events.size(), 2U) << "one 79 per fall, whatever the lines";
    EXPECT_EQ(events[0].xid, 79);
    EXPECT_EQ(events[0].uuid, "GPU-3b");
    EXPECT_EQ(events[0].kmsg_seq, 6U);
    EXPECT_EQ(events[1].xid, 79);
    EXPECT_EQ(events[1].uuid, "GPU-from-log");
}

TEST(KmsgReader, AnUnreadableLogSaysWhy) {
    KmsgOptions o;
    o.path = "/nonexistent/kmsg";
    KmsgReader reader(o);
    EXPECT_FALSE(reader.readable());
    EXPECT_NE(reader.describe().find("cannot read /nonexistent/kmsg"), std::string::npos)
        << reader.describe();
    std::vector<telemetry::FaultEvent> none;
    reader.drain(none);
    EXPECT_TRUE(none.empty());
}

} // namespace kmsg_reader_test
} // namespace gua::faults
