// SPDX-License-Identifier: Apache-2.0
// Doctor: running the checks in order and turning the worst finding into an exit code.
#include "ops/doctor.hpp"

#include <algorithm>

namespace gua::ops {

const char* to_string(Severity severity) {
    switch (severity) {
    case Severity::info:
        return "info";
    case Severity::warn:
        return "warn";
    case Severity::fail:
        return "fail";
    case Severity::ok:
        break;
    }
    return "ok";
}

const char* symbol(Severity severity) {
    switch (severity) {
    case Severity::info:
        return "–";
    case Severity::warn:
        return "!";
    case Severity::fail:
        return "✗";
    case Severity::ok:
        break;
    }
    return "✓";
}

std::vector<Finding> run_doctor(const DoctorInputs& inputs, const Systemctl& systemctl) {
    std::vector<Finding> findings = check_gpus(inputs.nvml_library);
    findings.push_back(check_proc_access());
    findings.push_back(check_database(inputs.db));
    findings.push_back(check_disk(inputs.db));
    findings.push_back(check_clock(inputs.db));
    findings.push_back(check_kernel_log(
        inputs.config ? inputs.config.value().kernel_log.value_or("/dev/kmsg") : "/dev/kmsg"));
    const Installation installed = inspect(inputs.paths, inputs.db, systemctl);
    for (Finding& f : check_service(inputs, installed)) {
        findings.push_back(std::move(f));
    }
    for (const DaemonAlert alert : installed.alerts) {
        findings.push_back({"daemon_alert", "recording", Severity::fail,
                            std::string(describe(alert)), std::string(fix_for(alert))});
    }
    findings.push_back(check_config(inputs, installed));
    if (std::optional<Finding> endpoint = check_endpoint(inputs)) {
        findings.push_back(std::move(*endpoint));
    }
    for (Finding& f : check_policy(inputs, installed)) {
        findings.push_back(std::move(f));
    }
    return findings;
}

int doctor_exit_code(const std::vector<Finding>& findings) {
    Severity worst = Severity::ok;
    for (const Finding& f : findings) {
        worst = std::max(worst, f.severity);
    }
    return worst == Severity::fail ? 2 : worst == Severity::warn ? 1 : 0;
}

} // namespace gua::ops
