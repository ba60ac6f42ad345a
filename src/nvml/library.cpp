// SPDX-License-Identifier: Apache-2.0
// Loading NVML: dlopen (libnvidia-ml.so.1 unless overridden), symbol binding newest name first,
// nvmlInit, and dlclose on every failure path.
#include "nvml/library.hpp"

#include "nvml/open.hpp"

#include <dlfcn.h>
#include <string>
#include <unistd.h>

namespace gua::nvml {
namespace {

std::string not_found_message(const std::string& path) {
    return "NVML library " + path +
           " not found — is the NVIDIA driver installed? `gua demo` works without a GPU";
}

std::string last_dl_error() {
    const char* text = dlerror();
    return text != nullptr ? text : "unknown dlopen error";
}

} // namespace

Result<std::unique_ptr<Library>> Library::open(const std::string& path_override) {
    const std::string path = path_override.empty() ? k_default_library : path_override;
    dlerror();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const std::string detail = last_dl_error();
        const bool has_slash = path.find('/') != std::string::npos;
        const bool missing = has_slash ? access(path.c_str(), F_OK) != 0
                                       : detail.find("No such file") != std::string::npos;
        if (missing) {
            return Error{not_found_message(path)};
        }
        return Error{"cannot load NVML library " + path + ": " + detail};
    }
    // From here the Library owns the handle: its destructor dlcloses on every return below.
    std::unique_ptr<Library> library(new Library(handle, path));
    for (const EntryPoint& entry : k_entry_points) {
        Symbol& symbol = library->m_symbols[entry_index(entry.id)];
        for (int i = 0; i < static_cast<int>(entry.names.size()); ++i) {
            const char* name = entry.names[static_cast<std::size_t>(i)];
            if (name == nullptr) {
                break;
            }
            if (void* address = dlsym(handle, name); address != nullptr) {
                symbol = Symbol{address, i};
                break;
            }
        }
        if (symbol.address == nullptr && entry.need == Need::required) {
            return Error{"NVML library " + path + " lacks " + entry.names[0] +
                         " (driver too old or not an NVML library)"};
        }
    }
    const nvmlReturn_t rc = library->call<Entry::init>();
    if (rc == NVML_ERROR_LIB_RM_VERSION_MISMATCH) {
        return Error{"NVIDIA driver/library version mismatch (driver upgraded without reboot?): " +
                         path + " does not match the loaded kernel module",
                     ErrorKind::version_mismatch};
    }
    if (rc != NVML_SUCCESS) {
        return Error{"NVML initialization failed: " + library->error_string(rc) + " (error " +
                     std::to_string(static_cast<int>(rc)) + ")"};
    }
    library->m_initialized = true;
    return library;
}

Library::~Library() {
    if (m_initialized) {
        call<Entry::shutdown>();
    }
    dlclose(m_handle);
}

std::array<BoundSymbol, k_entry_count> Library::bindings() const {
    std::array<BoundSymbol, k_entry_count> out{};
    for (const EntryPoint& entry : k_entry_points) {
        const Symbol& symbol = m_symbols[entry_index(entry.id)];
        BoundSymbol& bound = out[entry_index(entry.id)];
        bound.id = entry.id;
        bound.variant = symbol.variant;
        bound.name =
            symbol.variant >= 0 ? entry.names[static_cast<std::size_t>(symbol.variant)] : nullptr;
    }
    return out;
}

std::size_t Library::process_info_stride(Entry process_list) const {
    switch (variant(process_list)) {
    case 0: {
        const bool r535_window = has(Entry::device_get_conf_compute_mem_size_info) &&
                                 !has(Entry::device_get_running_process_detail_list);
        return r535_window ? sizeof(nvmlProcessDetail_v1_t) : sizeof(nvmlProcessInfo_v2_t);
    }
    case 1:
        return sizeof(nvmlProcessInfo_v2_t);
    default:
        return sizeof(nvmlProcessInfo_v1_t);
    }
}

std::string Library::error_string(nvmlReturn_t rc) const {
    auto* fn =
        reinterpret_cast<ErrorStringFn*>(m_symbols[entry_index(Entry::error_string)].address);
    const char* text = fn != nullptr ? fn(rc) : nullptr;
    return text != nullptr ? text : "NVML error " + std::to_string(static_cast<int>(rc));
}

std::string Library::driver_version() const {
    char buffer[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
    if (call<Entry::system_get_driver_version>(
            &buffer[0], NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE) != NVML_SUCCESS) {
        return {};
    }
    buffer[sizeof(buffer) - 1] = '\0';
    return buffer;
}

} // namespace gua::nvml
