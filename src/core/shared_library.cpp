// SPDX-License-Identifier: Apache-2.0
// SharedLibrary: one dlopen per soname for the process's lifetime.
#include "core/shared_library.hpp"

#include "core/fatal.hpp"

#include <fmt/format.h>

#include <dlfcn.h>
#include <map>
#include <memory>
#include <mutex>

namespace gua {

const SharedLibrary& SharedLibrary::open(const std::string& soname, const std::string& package,
                                         const std::string& feature) {
    static std::mutex mutex;
    static std::map<std::string, std::unique_ptr<SharedLibrary>> opened;
    const std::lock_guard lock(mutex);
    if (const auto it = opened.find(soname); it != opened.end()) {
        return *it->second;
    }
    void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* why = dlerror();
        throw Fatal(fmt::format("{} needs {} ({}); install the Debian package {}", feature, soname,
                                why != nullptr ? why : "not found", package));
    }
    auto& slot = opened[soname];
    slot.reset(new SharedLibrary(handle, soname));
    return *slot;
}

void* SharedLibrary::address(const char* name) const {
    dlerror();
    void* address = dlsym(m_handle, name);
    if (address == nullptr) {
        throw Fatal(fmt::format("{} has no symbol {} (too old?)", m_soname, name));
    }
    return address;
}

} // namespace gua
