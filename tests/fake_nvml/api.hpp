// SPDX-License-Identifier: Apache-2.0
// Building blocks of the fake's exported C functions: the common checks every device call makes
// and the implementations shared by several name variants of one NVML function.
#pragma once

#include "driver.hpp"

#include <mutex>
#include <string>

/// Marks a function as part of the fake's exported C ABI (everything else is hidden).
#define GUA_FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace gua::fake_nvml {

using namespace gua::nvml;

/// The process-wide fake driver.
inline Driver& drv() {
    return Driver::instance();
}

/// Runs `body(handle, device)` under the lock after the init, handle and fault checks.
template <typename Body> nvmlReturn_t device_call(const char* function, nvmlDevice_t h, Body body) {
    Driver& driver = drv();
    std::lock_guard lock(driver.lock());
    if (!driver.initialized()) {
        return NVML_ERROR_UNINITIALIZED;
    }
    driver.emit_kmsg(); // the kernel log advances with scenario time, whoever calls
    const Handle* handle = driver.resolve(h);
    if (handle == nullptr) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (const auto rc = driver.fault(function, handle->device)) {
        return *rc;
    }
    return body(*handle, driver.scenario().devices[handle->device]);
}

/// Copies `text` with its NUL; INSUFFICIENT_SIZE when `length` is too small.
nvmlReturn_t copy_string(const std::string& text, char* out, unsigned int length);
/// nvmlDeviceGetCount(_v2): v1 leaves out devices without permission.
nvmlReturn_t count_devices(unsigned int* count, bool skip_forbidden);
/// nvmlDeviceGetHandleByIndex(_v2): v1 indexes only the permitted devices.
nvmlReturn_t handle_by_index(const char* function, unsigned int index, nvmlDevice_t* device,
                             bool skip_forbidden);
/// Running-process lists with the INSUFFICIENT_SIZE protocol, writing `stride`-byte entries.
nvmlReturn_t process_list(const char* function, nvmlDevice_t h, unsigned int* count, void* infos,
                          ProcessKind kind, std::size_t stride);
/// nvmlDeviceGetPciInfo variants; `legacy` writes the 52-byte pre-R450 struct.
nvmlReturn_t pci_info(const char* function, nvmlDevice_t h, void* out, bool legacy);
/// nvmlDeviceGetMemoryInfo (v1 when `v2` is null: used includes reserved) and _v2.
nvmlReturn_t memory_info(const char* function, nvmlDevice_t h, nvmlMemory_v2_t* v2,
                         nvmlMemory_t* v1);
/// Temperature of the GPU die in °C.
nvmlReturn_t temperature(const char* function, nvmlDevice_t h, int* out);
/// Clocks event (throttle) reasons bitmask.
nvmlReturn_t clock_reasons(const char* function, nvmlDevice_t h, unsigned long long* reasons);

} // namespace gua::fake_nvml
