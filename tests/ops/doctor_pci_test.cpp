// SPDX-License-Identifier: Apache-2.0
// Doctor's PCI check on a sysfs fixture: three NVIDIA GPUs on the bus (a 3D controller, a VGA
// one, a second 3D controller), an NVSwitch bridge and another vendor's card that are not GPUs;
// NVML showing two of the GPUs → a warning naming the third; all shown → ok; none on the bus →
// info, never a warning.
#include "ops/doctor.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace gua::ops {
namespace doctor_pci_test { // named after the file: unique in a unity batch

void device(const std::string& dir, const std::string& id, const std::string& vendor,
            const std::string& cls) {
    const std::filesystem::path p = std::filesystem::path(dir) / id;
    std::filesystem::create_directories(p);
    std::ofstream(p / "vendor") << vendor << "\n";
    std::ofstream(p / "class") << cls << "\n";
}

TEST(DoctorPci, AGpuOnTheBusThatNvmlLacksIsAWarning) {
    test::TempDir tmp;
    const std::string dir = tmp.file("devices");
    device(dir, "0000:3b:00.0", "0x10de", "0x030200");
    device(dir, "0000:5e:00.0", "0x10DE", "0x030000");
    device(dir, "0000:86:00.0", "0x10de", "0x030200");
    device(dir, "0000:07:00.0", "0x10de", "0x068000"); // NVSwitch: a bridge, not a GPU
    device(dir, "0000:01:00.0", "0x1002", "0x030000"); // another vendor's VGA card
    const std::vector<std::string> on_bus = pci_gpus(dir);
    EXPECT_EQ(on_bus, (std::vector<std::string>{"0000:3b:00.0", "0000:5e:00.0", "0000:86:00.0"}));

    const Finding missing = pci_gpus_finding(on_bus, {"00000000:3B:00.0", "00000000:86:00.0"});
    EXPECT_EQ(missing.check, "pci_gpus");
    EXPECT_EQ(missing.severity, Severity::warn);
    EXPECT_EQ(missing.message,
              "the PCI bus lists 1 NVIDIA GPU that NVML does not show: 0000:5e:00.0");
    EXPECT_NE(missing.fix.find("Xid 79"), std::string::npos);

    const Finding all =
        pci_gpus_finding(on_bus, {"00000000:3B:00.0", "00000000:5E:00.0", "00000000:86:00.0"});
    EXPECT_EQ(all.severity, Severity::ok);
    EXPECT_EQ(all.message, "3 NVIDIA GPUs on the PCI bus, each visible to NVML");

    const Finding none = pci_gpus_finding(pci_gpus(tmp.file("nowhere")), {"00000000:3B:00.0"});
    EXPECT_EQ(none.severity, Severity::info);
}

TEST(DoctorPci, TheRealDoctorOnTheFakeDriverNamesTheMissingCard) {
    test::TempDir tmp;
    const std::string devices = tmp.file("sys/bus/pci/devices");
    device(devices, "0000:3b:00.0", "0x10de", "0x030200");
    device(devices, "0000:5e:00.0", "0x10de", "0x030200");
    device(devices, "0000:86:00.0", "0x10de", "0x030200");
    const nlohmann::json scenario = {
        {"devices", {{{"pci_bus_id", "00000000:3B:00.0"}}, {{"pci_bus_id", "00000000:86:00.0"}}}}};
    std::ofstream(tmp.file("scenario.json")) << scenario.dump();
    const test::RunResult r =
        test::run_gua({"doctor", "--format", "json"},
                      {{"GUA_NVML_LIBRARY", std::string(GUA_FAKE_NVML_DIR) + "/libnvidia-ml.so.1"},
                       {"GUA_FAKE_NVML_SCENARIO", tmp.file("scenario.json")},
                       {"GUA_TEST_SYSFS_ROOT", tmp.file("sys")}});
    const nlohmann::json j = nlohmann::json::parse(r.out);
    bool found = false;
    for (const nlohmann::json& check : j["checks"]) {
        if (check["check"] == "pci_gpus") {
            found = true;
            EXPECT_EQ(check["status"], "warn");
            EXPECT_EQ(check["message"],
                      "the PCI bus lists 1 NVIDIA GPU that NVML does not show: 0000:5e:00.0");
        }
    }
    EXPECT_TRUE(found) << r.out;
    int fabric = 0;
    for (const nlohmann::json& check : j["checks"]) {
        const std::string name = check["check"];
        if (name == "pcie_link" || name == "row_remap" || name == "persistence") {
            EXPECT_EQ(check["status"], "ok") << check.dump();
            ++fabric;
        } else if (name == "nvlink") {
            EXPECT_EQ(check["status"], "info") << check.dump();
            ++fabric;
        }
    }
    EXPECT_EQ(fabric, 4) << r.out;
}

TEST(DoctorFabric, RulesOnTheReadings) {
    nvml::FabricReading idle{"GPU-a", 0, 1, 5, 16, 16, false, true, {}, {}, {}, {}, {}};
    nvml::FabricReading narrow{"GPU-b", 1, 5, 5, 8, 16, false, true, 18, 18, 0, 0, 12};
    std::vector<Finding> f = fabric_findings({idle, narrow});
    ASSERT_EQ(f.size(), 4U);
    EXPECT_EQ(f[0].check, "pcie_link");
    EXPECT_EQ(f[0].severity, Severity::warn) << "x8 of x16 at full generation";
    EXPECT_EQ(f[0].message, "link narrower than it can be at full speed: GPU 1: gen 5 of 5, x8 "
                            "of x16");
    EXPECT_EQ(f[1].severity, Severity::ok);
    EXPECT_EQ(f[2].check, "nvlink");
    EXPECT_EQ(f[2].severity, Severity::ok) << "CRC errors alone are not a warning";
    EXPECT_EQ(f[3].severity, Severity::ok);

    f = fabric_findings({idle});
    EXPECT_EQ(f[0].severity, Severity::info) << "a slow idle link is power saving";
    EXPECT_EQ(f[2].severity, Severity::info);

    nvml::FabricReading bad{"GPU-c", 2, 5, 5, 16, 16, true, false, 18, 16, 3, 1, 0};
    f = fabric_findings({bad});
    EXPECT_EQ(f[1].severity, Severity::fail);
    EXPECT_EQ(f[1].message, "a memory row could not be remapped on GPU 2");
    EXPECT_EQ(f[2].severity, Severity::warn);
    EXPECT_EQ(f[2].message, "GPU 2: 16 of 18 links active; GPU 2: 3 replay, 1 recovery, 0 CRC "
                            "errors (counters since the driver loaded)");
    EXPECT_EQ(f[3].severity, Severity::warn);
}

} // namespace doctor_pci_test
} // namespace gua::ops
