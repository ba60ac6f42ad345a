// SPDX-License-Identifier: Apache-2.0
// The kernel log parsers: /dev/kmsg records (real and hostile), every form of the driver's Xid
// line seen in the wild (with and without pid/name, the MIG form, older drivers without "PCI:",
// NVLink5 lines, quoted '<unknown>'), the "GPU at PCI" line, both "fallen off the bus" forms,
// and lines that must not match. Any byte string is safe input.
#include "faults/kmsg.hpp"

#include <gtest/gtest.h>

#include <random>

namespace gua::faults {
namespace kmsg_parse_test { // named after the file: unique in a unity batch

TEST(KmsgRecord, ParsesARealRecord) {
    const auto r = parse_kmsg_record(
        "4,361,41564460,c;NVRM: Xid (PCI:0000:00:06): 43, pid=534, name=python3, channel 0x1e");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->priority, 4);
    EXPECT_EQ(r->seq, 361U);
    EXPECT_EQ(r->mono_us, 41564460);
    EXPECT_EQ(r->text, "NVRM: Xid (PCI:0000:00:06): 43, pid=534, name=python3, channel 0x1e");
    const auto extra = parse_kmsg_record("12,7,99,-,caller=T12;text; with semicolons");
    ASSERT_TRUE(extra) << "extra header fields are ignored; a user-injected line has prio 12";
    EXPECT_EQ(extra->priority, 12);
    EXPECT_EQ(extra->text, "text; with semicolons");
}

TEST(KmsgRecord, RejectsContinuationsAndJunk) {
    for (const char* line :
         {" SUBSYSTEM=pci", " DEVICE=+pci:0000:3b:00.0", "", ";", "4,1;x", "a,1,2,-;x",
          "4,-1,2,-;x", "4,1,-2,-;x", "4,99999999999999999999,1,-;x", "4,1,2,-"}) {
        EXPECT_FALSE(parse_kmsg_record(line)) << line;
    }
}

TEST(XidLine, WithPidAndName) {
    const auto x = parse_xid_line("NVRM: Xid (PCI:0000:00:06): 31, pid=513, name=python3, "
                                  "channel 0x0000001e, intr 00000000. MMU Fault: ENGINE GRAPHICS");
    ASSERT_TRUE(x);
    EXPECT_EQ(x->pci, "0000:00:06");
    EXPECT_EQ(x->xid, 31);
    EXPECT_EQ(x->pid, 513U);
    EXPECT_EQ(x->name, "python3");
    EXPECT_EQ(x->message, "channel 0x0000001e, intr 00000000. MMU Fault: ENGINE GRAPHICS");
    EXPECT_FALSE(x->gpu_instance);
}

TEST(XidLine, EveryFormSeenInTheWild) {
    const auto unknown = parse_xid_line("NVRM: Xid (PCI:0000:CB:00): 13, pid='<unknown>', "
                                        "name=<unknown>, Graphics SM Warp Exception");
    ASSERT_TRUE(unknown);
    EXPECT_EQ(unknown->pci, "0000:cb:00") << "lowercase";
    EXPECT_FALSE(unknown->pid);
    EXPECT_EQ(unknown->name, "");
    EXPECT_EQ(unknown->message, "Graphics SM Warp Exception");

    const auto no_name = parse_xid_line("NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: "
                                        "New row marked for remapping");
    ASSERT_TRUE(no_name);
    EXPECT_EQ(no_name->pid, 1896U);
    EXPECT_EQ(no_name->name, "");
    EXPECT_EQ(no_name->message, "Row Remapper: New row marked for remapping");

    const auto no_pid = parse_xid_line("NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000005 intr "
                                       "00008000");
    ASSERT_TRUE(no_pid);
    EXPECT_EQ(no_pid->xid, 32);
    EXPECT_FALSE(no_pid->pid);
    EXPECT_EQ(no_pid->message, "Channel ID 00000005 intr 00008000");

    const auto old = parse_xid_line("NVRM: Xid (0000:01:00): 13, 0005 00000000 0000c1c0");
    ASSERT_TRUE(old) << "older drivers: no PCI: prefix";
    EXPECT_EQ(old->pci, "0000:01:00");

    const auto mig = parse_xid_line("NVRM: Xid (PCI:0000:3b:00 GPU-I:01 GPU-CI:02): 31, pid=7, "
                                    "name=a, b, c");
    ASSERT_TRUE(mig);
    EXPECT_EQ(mig->gpu_instance, 1U);
    EXPECT_EQ(mig->compute_instance, 2U);
    EXPECT_EQ(mig->name, "a") << "a name is taken up to the next comma and space";
    EXPECT_EQ(mig->message, "b, c");

    const auto gi_only = parse_xid_line("NVRM: Xid (PCI:0000:3b:00 GPU-I:07): 43, pid=1, name=x");
    ASSERT_TRUE(gi_only);
    EXPECT_EQ(gi_only->gpu_instance, 7U);
    EXPECT_FALSE(gi_only->compute_instance);
    EXPECT_EQ(gi_only->message, "");

    const auto nvlink5 = parse_xid_line("NVRM: Xid (PCI:0018:01:00): 149, NETIR_LINK_EVT Fatal "
                                        "XC0 i0 Link 08 (0x004505c6 0x00000000)");
    ASSERT_TRUE(nvlink5);
    EXPECT_EQ(nvlink5->pci, "0018:01:00");
    EXPECT_EQ(nvlink5->xid, 149);

    const auto caused = parse_xid_line("NVRM: Xid (PCI:0000:3b:00): 45, pid=9, name=train, "
                                       "Ch 00000010 caused by previous Xid 43");
    ASSERT_TRUE(caused);
    EXPECT_EQ(caused->message, "Ch 00000010 caused by previous Xid 43");
}

TEST(XidLine, LinesThatAreNotXids) {
    for (const char* text :
         {"NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.159.04",
          "NVRM: Xid (PCI:0000:3b:00): x, pid=1", "NVRM: Xid (PCI:zz:3b:00): 13, pid=1",
          "NVRM: Xid (PCI:0000:3b): 13", "NVRM: Xid (PCI:0000:3b:00):13", "NVRM: Xid (",
          "NVRM: Xid (PCI:0000:3b:00 GPU-I:01", "NVRM: Xid (PCI:0000:3b:00): "}) {
        EXPECT_FALSE(parse_xid_line(text)) << text;
    }
    const auto huge = parse_xid_line("NVRM: Xid (PCI:0000:3b:00): 99999999999999999999999, x");
    EXPECT_FALSE(huge) << "a code out of range";
}

TEST(GpuAtPci, MapsTheAddressToTheUuid) {
    const auto g =
        parse_gpu_at_pci("NVRM: GPU at PCI:0000:3B:00: GPU-5e8f3b2a-1c2d-4e5f-8a9b-0c1d2e3f4a5b");
    ASSERT_TRUE(g);
    EXPECT_EQ(g->pci, "0000:3b:00");
    EXPECT_EQ(g->uuid, "GPU-5e8f3b2a-1c2d-4e5f-8a9b-0c1d2e3f4a5b");
    EXPECT_FALSE(parse_gpu_at_pci("NVRM: GPU at PCI:0000:3b:00: Board Serial"));
}

TEST(FallenOff, BothForms) {
    const auto one = parse_fallen_off("NVRM: GPU 0000:18:00.0: GPU has fallen off the bus.");
    ASSERT_TRUE(one);
    EXPECT_EQ(one->pci, "0000:18:00");
    EXPECT_FALSE(one->multi_line);
    const auto three = parse_fallen_off("NVRM: The NVIDIA GPU 0000:b3:00.0");
    ASSERT_TRUE(three);
    EXPECT_EQ(three->pci, "0000:b3:00");
    EXPECT_TRUE(three->multi_line);
    EXPECT_FALSE(parse_fallen_off("NVRM: GPU at PCI:0000:3b:00: GPU-1"));
}

TEST(KmsgPci, OfNvmlBusIds) {
    EXPECT_EQ(kmsg_pci_of("00000000:3B:00.0"), "0000:3b:00");
    EXPECT_EQ(kmsg_pci_of("00000018:01:00.0"), "0018:01:00");
    EXPECT_EQ(kmsg_pci_of("0000:3b:00.0"), "0000:3b:00");
    EXPECT_EQ(kmsg_pci_of(""), "");
    EXPECT_EQ(kmsg_pci_of("garbage"), "");
}

TEST(KmsgParsers, AnyBytesAreSafe) {
    std::mt19937 rng(30);
    const std::string seed = "4,12,345,-;NVRM: Xid (PCI:0000:3b:00 GPU-I:01 GPU-CI:02): 43, "
                             "pid=534, name=python3, channel";
    for (int i = 0; i < 20000; ++i) {
        std::string line = seed.substr(0, rng() % (seed.size() + 1));
        for (int k = static_cast<int>(rng() % 4); k > 0 && !line.empty(); --k) {
            line[rng() % line.size()] = static_cast<char>(rng() % 256);
        }
        const auto record = parse_kmsg_record(line);
        const std::string_view text = record ? record->text : std::string_view(line);
        static_cast<void>(parse_xid_line(text));
        static_cast<void>(parse_gpu_at_pci(text));
        static_cast<void>(parse_fallen_off(text));
        static_cast<void>(kmsg_pci_of(text));
    }
}

} // namespace kmsg_parse_test
} // namespace gua::faults
