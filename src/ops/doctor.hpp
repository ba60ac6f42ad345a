// SPDX-License-Identifier: Apache-2.0
// `gua doctor`'s checks: each finding is one line with a verdict, what was seen, and the fix.
#pragma once

#include "config/config.hpp"
#include "nvml/open.hpp"
#include "ops/installation.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gua::ops {

/// How bad a finding is; the worst one sets doctor's exit code.
enum class Severity {
    ok,   ///< ✓
    info, ///< – (not checked, or nothing to say)
    warn, ///< ! works, but needs attention
    fail, ///< ✗ gua cannot record (or report) like this
};

/// One check's result.
struct Finding {
    std::string check; ///< stable key, e.g. "nvml_library"
    std::string title; ///< e.g. "NVML library"
    Severity severity = Severity::ok;
    std::string message; ///< what was found
    std::string fix;     ///< what to do; empty when nothing
};

/// What the checks look at.
struct DoctorInputs {
    Paths paths;
    std::string db;           ///< the database the daemon writes
    std::string nvml_library; ///< --nvml-library; empty: $GUA_NVML_LIBRARY, else the soname
    Result<config::Config> config = config::Config{};
    bool config_file_exists = false;
};

/// The driver version in the first line of /proc/driver/nvidia/version: the first version-shaped
/// word after "Kernel Module" ("NVIDIA UNIX x86_64 Kernel Module  560.35.05  Thu Aug …" and the
/// open module's "NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build …"); empty
/// when there is none.
std::string kernel_module_version_of(std::string_view line);

/// Runs every check in order: NVML library, driver, GPUs, /proc access, database, disk, clock,
/// kernel log, service, unit hardening, configuration, HTTP endpoint (when
/// listen is set), policy privileges.
std::vector<Finding> run_doctor(const DoctorInputs& inputs, const Systemctl& systemctl);

/// 0 when the worst finding is ok or info, 1 for a warning, 2 for a failure.
int doctor_exit_code(const std::vector<Finding>& findings);

/// "ok", "info", "warn" or "fail".
const char* to_string(Severity severity);
/// "✓", "–", "!" or "✗".
const char* symbol(Severity severity);

/// NVML library, driver and GPU findings (three, always).
std::vector<Finding> check_gpus(const std::string& nvml_library);
/// Whether the daemon can read other users' /proc entries.
Finding check_proc_access();
/// Free space where the database lives.
Finding check_disk(const std::string& db);
/// Wall clock set, NTP-synchronized, not behind the database's last tick.
Finding check_clock(const std::string& db);
/// Whether the kernel log the daemon reads for Xid lines (`[daemon] kernel_log`) opens for this
/// user: info, never a warning (Xids also come from NVML events; docs/faults.md).
Finding check_kernel_log(const std::string& path);
/// NVIDIA GPUs (vendor 0x10de, class 0x0300xx VGA or 0x0302xx 3D controller) in `devices_dir`
/// (/sys/bus/pci/devices), as "dddd:bb:dd.f", sorted.
std::vector<std::string> pci_gpus(const std::string& devices_dir);
/// "00000000:3B:00.0" (NVML) or "0000:3b:00.0" (sysfs) as "0000:3b:00.0".
std::string normalized_bus_id(std::string id);
/// Warns about the GPUs `on_bus` whose bus id none of `nvml_bus_ids` (NVML's pci_bus_id, e.g.
/// "00000000:3B:00.0") names; info when the bus lists none (a container, the fake driver).
Finding pci_gpus_finding(const std::vector<std::string>& on_bus,
                         const std::vector<std::string>& nvml_bus_ids);
/// PCIe link, row remapping, NVLink and persistence mode of the GPUs read now, one finding
/// each (pcie_link, row_remap, nvlink, persistence; rules in docs/faults.md).
std::vector<Finding> fabric_findings(const std::vector<nvml::FabricReading>& gpus);
/// Database readable and writable (or creatable).
Finding check_database(const std::string& db);
/// Service or background daemon installed, enabled and running; unit hardening compatible.
std::vector<Finding> check_service(const DoctorInputs& inputs, const Installation& installed);
/// One finding per policy action (notify, terminate) that a configured rule uses: whether the
/// daemon's credentials allow it on other users (the running daemon's from /proc, else what the
/// installed unit or `gua start` gives), with the fix. Empty when no rule notifies or terminates.
std::vector<Finding> check_policy(const DoctorInputs& inputs, const Installation& installed);
/// Configuration file valid.
Finding check_config(const DoctorInputs& inputs, const Installation& installed);
/// [daemon] listen beyond loopback without TLS or auth in [daemon] web_config: a warning;
/// nothing when listen is off.
std::optional<Finding> check_endpoint(const DoctorInputs& inputs);

} // namespace gua::ops
