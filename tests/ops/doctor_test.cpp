// SPDX-License-Identifier: Apache-2.0
// End to end: `gua doctor` with and without an NVML library, in text and JSON, and its check of
// the policy's privileges against the installed unit.
#include "ops/doctor.hpp"
#include "ops/harness.hpp"
#include "ops/start_plan.hpp"

#include <gtest/gtest.h>

namespace gua::ops::testing {
namespace {

using nlohmann::json;
using Doctor = FakeGpuTest;
using DoctorNoGpu = OpsTest;

std::string line_of(const std::string& text, const std::string& title) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.find(" " + title + ": ") != std::string::npos) {
            return line;
        }
    }
    return "";
}

TEST_F(Doctor, FindsTheLibraryDriverAndGpus) {
    const GuaRun run = gua("doctor", {}, fake_env());
    EXPECT_TRUE(line_of(run.out, "NVML library").starts_with("✓")) << run.out;
    EXPECT_TRUE(contains(line_of(run.out, "NVML library"), "libnvidia-ml.so.1")) << run.out;
    EXPECT_EQ(line_of(run.out, "NVIDIA driver"),
              "✓ NVIDIA driver: driver 560.35.05 (NVML initialized)");
    EXPECT_EQ(line_of(run.out, "GPUs"), "✓ GPUs: 2 GPUs visible: 0 NVIDIA H100 80GB HBM3, "
                                        "1 NVIDIA A100-SXM4-40GB");
    EXPECT_TRUE(line_of(run.out, "/proc access").starts_with("✓")) << run.out;
    EXPECT_TRUE(line_of(run.out, "database").starts_with("✓")) << run.out;
    EXPECT_TRUE(contains(line_of(run.out, "daemon"), "no daemon is recording — fix: `gua start`"))
        << run.out;
    EXPECT_FALSE(contains(run.out, "✗")) << run.out;
    EXPECT_EQ(run.exit_code, 1) << "a daemon that is not running is a warning";
}

TEST_F(Doctor, ShowsMigInstances) {
    write_scenario(json{{"driver_version", "560.35.05"},
                        {"devices",
                         {{{"uuid", "GPU-aaaaaaaa-0000-0000-0000-000000000000"},
                           {"mig", true},
                           {"mig_instances",
                            {{{"uuid", "MIG-11111111-0000-0000-0000-000000000000"}},
                             {{"uuid", "MIG-22222222-0000-0000-0000-000000000000"}}}}}}}});
    const GuaRun run = gua("doctor", {}, fake_env());
    EXPECT_EQ(line_of(run.out, "GPUs"),
              "✓ GPUs: 1 GPU visible: GPU-aaaaaaaa in MIG mode (2 instances)")
        << run.out;
}

// A GPU the driver counts but cannot open is named with its index and the driver's error.
TEST_F(Doctor, NamesTheGpusNvmlCouldNotOpen) {
    write_scenario(json{{"driver_version", "560.35.05"},
                        {"devices", {{{"uuid", "GPU-a"}}, {{"uuid", "GPU-b"}}}},
                        {"faults", {{{"function", "*"}, {"device", 1}, {"error", 15}}}}});
    const GuaRun run = gua("doctor", {}, fake_env());
    const std::string line = line_of(run.out, "GPUs");
    EXPECT_TRUE(line.starts_with("! GPUs: 1 GPU visible: 0 NVIDIA H100 80GB HBM3; NVML could not "
                                 "open GPU 1 (nvmlDeviceGetHandleByIndex: GPU is lost (error 15))"))
        << run.out;
    EXPECT_TRUE(contains(line, "— fix: check `nvidia-smi -q -i <index>`")) << line;
}

TEST_F(Doctor, AllGoodWithARunningDaemon) {
    ASSERT_EQ(start_background().exit_code, 0);
    const GuaRun run = gua("doctor", {"--format", "json"}, fake_env());
    const json j = json::parse(run.out);
    for (const json& check : j["checks"]) {
        if (check["check"] != "clock") {
            EXPECT_TRUE(check["status"] == "ok" || check["status"] == "info") << check.dump();
        }
    }
    EXPECT_EQ(j["exit_code"], run.exit_code);
    EXPECT_EQ(j["schema_version"], 1);
    EXPECT_LE(run.exit_code, 1) << "only an unsynchronized clock may warn";
    EXPECT_EQ(gua("stop").exit_code, 0);
}

TEST_F(DoctorNoGpu, MissingLibraryFailsWithTheFix) {
    const GuaRun run = gua("doctor", {}, {{"GUA_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"}});
    EXPECT_EQ(run.exit_code, 2);
    const std::string line = line_of(run.out, "NVML library");
    EXPECT_TRUE(line.starts_with("✗ NVML library: /nonexistent/libnvidia-ml.so.1 not found"))
        << run.out;
    EXPECT_TRUE(contains(line, "— fix: install the NVIDIA driver")) << line;
    EXPECT_EQ(line_of(run.out, "GPUs"), "– GPUs: not checked: no NVML library");
}

TEST_F(DoctorNoGpu, JsonListsEveryCheck) {
    const GuaRun run = gua("doctor", {"--format", "json"},
                           {{"GUA_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"}});
    const json j = json::parse(run.out);
    std::vector<std::string> names;
    for (const json& check : j["checks"]) {
        names.push_back(check["check"]);
        EXPECT_TRUE(check.contains("message") && check.contains("fix") && check.contains("title"));
    }
    EXPECT_EQ(names, (std::vector<std::string>{"nvml_library", "driver", "gpus", "proc_access",
                                               "database", "disk", "clock", "kernel_log", "service",
                                               "daemon", "config", "slurm_cgroups"}));
    EXPECT_EQ(j["checks"][0]["status"], "fail");
    EXPECT_EQ(j["exit_code"], 2);
    EXPECT_EQ(run.exit_code, 2);
}

TEST_F(DoctorNoGpu, InvalidConfigFails) {
    fs::create_directories(config_file().parent_path());
    std::ofstream(config_file()) << "[thresholds]\nactive_util_pct = 500\n";
    const GuaRun run = gua("doctor");
    EXPECT_EQ(run.exit_code, 2);
    const std::string line = line_of(run.out, "configuration");
    EXPECT_TRUE(line.starts_with("✗ configuration: " + config_file().string() + ":2:")) << line;
    EXPECT_TRUE(contains(line, "fix: edit " + config_file().string())) << line;
    const GuaRun start = gua("start");
    EXPECT_EQ(start.exit_code, 2) << "start refuses an invalid configuration";
}

TEST_F(DoctorNoGpu, AnEndpointBeyondLoopbackWithoutTlsOrAuthWarns) {
    fs::create_directories(config_file().parent_path());
    std::ofstream(config_file()) << "[daemon]\nlisten = \"0.0.0.0:10409\"\n";
    const std::string open = line_of(gua("doctor").out, "HTTP endpoint");
    EXPECT_TRUE(open.starts_with("! HTTP endpoint: 0.0.0.0:10409 is reachable beyond loopback "
                                 "without TLS or authentication"))
        << open;
    EXPECT_TRUE(contains(open, "web_config")) << open;
    std::ofstream(config_file().parent_path() / "web.yml")
        << "tls_server_config:\n  cert_file: a.pem\n  key_file: a.key\n";
    std::ofstream(config_file()) << "[daemon]\nlisten = \"0.0.0.0:10409\"\n"
                                 << "web_config = \"web.yml\"\n";
    const std::string secured = line_of(gua("doctor").out, "HTTP endpoint");
    EXPECT_TRUE(secured.starts_with("✓ HTTP endpoint: 0.0.0.0:10409 is reachable beyond loopback, "
                                    "secured by"))
        << secured;
    std::ofstream(config_file()) << "[daemon]\nlisten = \"10409\"\n";
    EXPECT_EQ(line_of(gua("doctor").out, "HTTP endpoint"),
              "✓ HTTP endpoint: 10409 is loopback only");
}

TEST_F(DoctorNoGpu, UnitSettingsThatHideTheGpusFail) {
    fs::create_directories(root() / "run/systemd/system");
    const fs::path unit = root() / "etc/systemd/system/gua.service";
    fs::create_directories(unit.parent_path());
    std::ofstream(unit) << "[Service]\nExecStart=/usr/bin/gua daemon\nWatchdogSec=120s\n";
    fs::create_directories(root() / "etc/systemd/system/gua.service.d");
    std::ofstream(root() / "etc/systemd/system/gua.service.d/harden.conf")
        << "[Service]\nProtectClock=yes\nProtectProc=invisible\n";
    const GuaRun run = gua("doctor");
    const std::string line = line_of(run.out, "unit hardening");
    EXPECT_TRUE(
        line.starts_with("✗ unit hardening: ProtectClock=yes implies DeviceAllow=char-rtc r"))
        << run.out;
    EXPECT_TRUE(contains(line, "ProtectProc=invisible hides other users' processes")) << line;
    EXPECT_EQ(run.exit_code, 2);
}

// Each configured policy action is checked against the credentials the installed unit gives:
// the bare unit of older packages cannot terminate or notify, the packaged one can.
TEST_F(DoctorNoGpu, PolicyActionsAreCheckedAgainstTheUnitsCredentials) {
    fs::create_directories(root() / "run/systemd/system");
    fs::create_directories(root() / "etc/systemd/system");
    std::ofstream(root() / "etc/passwd") << "root:x:0:0::/root:/bin/sh\n"
                                            "gua:x:998:997::/var/lib/gua:/usr/sbin/nologin\n";
    std::ofstream(root() / "etc/group") << "tty:x:5:\nvideo:x:44:\ngua:x:997:\n";
    fs::create_directories(config_file().parent_path());
    std::ofstream(config_file()) << "[policy]\nenabled = true\n"
                                    "[[policy.rule]]\nname = \"warn\"\nafter = \"2h\"\n"
                                    "action = \"notify\"\n"
                                    "[[policy.rule]]\nname = \"reclaim\"\nafter = \"8h\"\n"
                                    "action = \"terminate\"\ndry_run = false\n";
    const fs::path unit = root() / "etc/systemd/system/gua.service";
    std::ofstream(unit) << "[Service]\nExecStart=/usr/bin/gua daemon\nWatchdogSec=120s\n"
                           "User=gua\nGroup=gua\nSupplementaryGroups=video\n"
                           "CapabilityBoundingSet=\nAmbientCapabilities=\n";
    const GuaRun bare = gua("doctor");
    EXPECT_EQ(bare.exit_code, 2);
    EXPECT_EQ(line_of(bare.out, "policy terminate"),
              "✗ policy terminate: rule reclaim cannot signal other users' processes: "
              "gua.service (uid 998): uid 998 has no CAP_KILL, so it may signal only its own "
              "processes — fix: `sudo systemctl edit gua`, add AmbientCapabilities=CAP_KILL and "
              "CapabilityBoundingSet=CAP_KILL under [Service] (as the packaged unit has), then "
              "`sudo systemctl restart gua`")
        << bare.out;
    EXPECT_EQ(line_of(bare.out, "policy notify"),
              "! policy notify: rule warn cannot write to other users' terminals once enabled "
              "and out of dry run: gua.service (uid 998): uid 998 is not in group tty (gid 5), "
              "so it cannot write to other users' terminals — fix: `sudo systemctl edit gua`, "
              "add SupplementaryGroups=video tty under [Service] (as the packaged unit has), "
              "then `sudo systemctl restart gua`")
        << bare.out;

    std::ofstream(unit) << unit_text_for("/usr/bin/gua");
    const GuaRun packaged = gua("doctor", {"--format", "json"});
    const json j = json::parse(packaged.out);
    std::map<std::string, json> checks;
    for (const json& c : j["checks"]) {
        checks[c["check"]] = c;
    }
    EXPECT_EQ(checks["policy_terminate"]["status"], "ok") << packaged.out;
    EXPECT_EQ(checks["policy_terminate"]["message"],
              "rule reclaim can signal other users' processes: gua.service (uid 998) has "
              "CAP_KILL");
    EXPECT_EQ(checks["policy_notify"]["status"], "ok") << packaged.out;
    EXPECT_TRUE(contains(checks["policy_notify"]["message"], "has group tty")) << packaged.out;
}

} // namespace
// The first line of /proc/driver/nvidia/version as the proprietary and the open kernel modules
// write it (the open one read on an H200 with driver 580.159.04; its "for x86_64" once came out
// as the version "for").
TEST(DoctorKernelModule, ReadsTheVersionOfBothModules) {
    EXPECT_EQ(kernel_module_version_of("NVRM version: NVIDIA UNIX x86_64 Kernel Module  560.35.05  "
                                       "Thu Aug 22 15:13:02 UTC 2024"),
              "560.35.05");
    EXPECT_EQ(kernel_module_version_of("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                       "580.159.04  Release Build  (nixbld@)  "),
              "580.159.04");
    EXPECT_EQ(kernel_module_version_of("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64"),
              "");
    EXPECT_EQ(kernel_module_version_of(""), "");
}

} // namespace gua::ops::testing
