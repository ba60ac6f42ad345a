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
    testing::TempDir tmp;
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
    testing::TempDir tmp;
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
}

} // namespace doctor_pci_test
} // namespace gua::ops
