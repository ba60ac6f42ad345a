// SPDX-License-Identifier: Apache-2.0
// Doctor: the NVML library, the driver behind it, and the GPUs it shows.
#include "nvml/open.hpp"
#include "ops/doctor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <link.h>
#include <map>
#include <sstream>

namespace gua::ops {

namespace {

std::string library_name(const std::string& override_path) {
    if (!override_path.empty()) {
        return override_path;
    }
    const char* env = std::getenv(nvml::k_library_env);
    return env != nullptr && *env != '\0' ? env : nvml::k_default_library;
}

// The file the dynamic loader picks for `name`, or the loader's error.
Result<std::string> locate_library(const std::string& name) {
    dlerror();
    void* handle = dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* why = dlerror();
        return Error{why != nullptr ? why : "not found"};
    }
    std::string path = name;
    link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
        *map->l_name != '\0') {
        std::error_code ec;
        const std::filesystem::path real = std::filesystem::canonical(map->l_name, ec);
        path = ec ? std::string(map->l_name) : real.string();
    }
    dlclose(handle);
    return path;
}

// "560.35.05" from /proc/driver/nvidia/version; empty when the kernel module is not loaded.
std::string kernel_module_version() {
    std::ifstream in("/proc/driver/nvidia/version");
    std::string line;
    std::getline(in, line);
    return kernel_module_version_of(line);
}

std::string driver_fix(const Error& error) {
    if (error.kind == ErrorKind::version_mismatch) {
        return "reboot, or reload the nvidia kernel modules: the driver was upgraded without "
               "reloading them";
    }
    return "load the NVIDIA kernel module (`modprobe nvidia`, or reboot after installing the "
           "driver); `nvidia-smi` must work";
}

Finding gpus_finding(const std::vector<telemetry::DeviceInfo>& devices) {
    Finding f{"gpus", "GPUs", Severity::ok, "", ""};
    std::vector<std::string> physical;
    std::map<std::string, int> mig_per_parent;
    for (const telemetry::DeviceInfo& d : devices) {
        if (d.parent_uuid.empty()) {
            physical.push_back(fmt::format("{} {}", d.index, d.name));
        } else {
            ++mig_per_parent[d.parent_uuid];
        }
    }
    const std::size_t gpu_count = physical.size() + mig_per_parent.size();
    if (gpu_count == 0) {
        f.severity = Severity::fail;
        f.message = "NVML works but shows no GPU";
        f.fix = "check `nvidia-smi -L`; the daemon's user needs read-write access to /dev/nvidia* "
                "(do not set PrivateDevices=, DevicePolicy= or DeviceAllow= in the unit)";
        return f;
    }
    f.message = fmt::format("{} GPU{} visible", gpu_count, gpu_count == 1 ? "" : "s");
    std::string list;
    for (const std::string& p : physical) {
        list += (list.empty() ? "" : ", ") + p;
    }
    for (const auto& [parent, count] : mig_per_parent) {
        list += fmt::format("{}{} in MIG mode ({} instance{})", list.empty() ? "" : ", ",
                            parent.substr(0, 12), count, count == 1 ? "" : "s");
    }
    f.message += ": " + list;
    return f;
}

/// "; NVML could not open GPU 1 (…)": the indices the driver counts but could not open.
std::string unopened_text(const std::vector<telemetry::UnopenedDevice>& unopened) {
    std::string out;
    for (const telemetry::UnopenedDevice& u : unopened) {
        out += fmt::format("{}GPU {} ({})", out.empty() ? "" : ", ", u.index, u.error);
    }
    return out.empty() ? out : "NVML could not open " + out;
}

Finding gpus_finding(const std::vector<telemetry::DeviceInfo>& devices,
                     const std::vector<telemetry::UnopenedDevice>& unopened) {
    Finding f = gpus_finding(devices);
    if (unopened.empty()) {
        return f;
    }
    f.severity = std::max(f.severity, Severity::warn);
    f.message += (f.message.empty() ? "" : "; ") + unopened_text(unopened);
    f.fix = "check `nvidia-smi -q -i <index>` and the kernel log (Xid errors); the daemon tries "
            "these indices again at every poll and records a card from when it opens";
    return f;
}

} // namespace

std::string kernel_module_version_of(std::string_view line) {
    const std::string_view marker = "Kernel Module";
    const std::size_t at = line.find(marker);
    if (at == std::string_view::npos) {
        return {};
    }
    std::istringstream words{std::string(line.substr(at + marker.size()))};
    std::string word;
    while (words >> word) {
        if (std::isdigit(static_cast<unsigned char>(word.front())) != 0 &&
            word.find_first_not_of("0123456789.") == std::string::npos) {
            return word;
        }
    }
    return {};
}

std::vector<Finding> check_gpus(const std::string& nvml_library) {
    std::vector<Finding> out;
    const std::string name = library_name(nvml_library);
    const Result<std::string> located = locate_library(name);
    if (!located) {
        out.push_back({"nvml_library", "NVML library", Severity::fail,
                       fmt::format("{} not found ({})", name, located.error().message),
                       "install the NVIDIA driver (e.g. `apt install nvidia-driver`), or point "
                       "GUA_NVML_LIBRARY at libnvidia-ml.so.1; `gua demo` works without a GPU"});
        out.push_back(
            {"driver", "NVIDIA driver", Severity::info, "not checked: no NVML library", ""});
        out.push_back({"gpus", "GPUs", Severity::info, "not checked: no NVML library", ""});
        return out;
    }
    out.push_back({"nvml_library", "NVML library", Severity::ok, located.value(), ""});
    auto source = nvml::open_nvml_source(nvml_library);
    if (!source) {
        out.push_back({"driver", "NVIDIA driver", Severity::fail, source.error().message,
                       driver_fix(source.error())});
        out.push_back({"gpus", "GPUs", Severity::info, "not checked: NVML did not initialize", ""});
        return out;
    }
    const std::string driver = source.value()->driver_version();
    const std::string module = kernel_module_version();
    std::string message =
        fmt::format("driver {} (NVML initialized)", driver.empty() ? "?" : driver);
    if (!module.empty()) {
        message += fmt::format(", kernel module {}", module);
    }
    out.push_back({"driver", "NVIDIA driver", Severity::ok, message, ""});
    const std::vector<telemetry::DeviceInfo> devices = source.value()->devices();
    out.push_back(gpus_finding(devices, source.value()->unopened_devices()));
    std::vector<std::string> bus_ids;
    for (const telemetry::DeviceInfo& d : devices) {
        if (d.parent_uuid.empty() && !d.pci_bus_id.empty()) {
            bus_ids.push_back(d.pci_bus_id);
        }
    }
    const char* sysfs = std::getenv("GUA_TEST_SYSFS_ROOT"); // test-only seam
    out.push_back(
        pci_gpus_finding(pci_gpus(std::string(sysfs != nullptr && *sysfs != '\0' ? sysfs : "/sys") +
                                  "/bus/pci/devices"),
                         bus_ids));
    for (Finding& f : fabric_findings(nvml::read_fabric(*source.value()))) {
        out.push_back(std::move(f));
    }
    if (const std::string note = source.value()->measurement_note(); !note.empty()) {
        out.push_back({"utilization", "Utilization", Severity::warn, note,
                       "with a driver that keeps utilization samples (nvmlDeviceGetSamples) gua "
                       "integrates whole intervals"});
    }
    return out;
}

} // namespace gua::ops
