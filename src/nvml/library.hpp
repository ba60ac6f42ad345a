// SPDX-License-Identifier: Apache-2.0
// gua::nvml::Library: the dlopen'ed NVML driver library, its bound entry points and its init state.
// Symbols are resolved from entry_points.def, newest name first; nothing links against NVML.
#pragma once

#include "core/result.hpp"
#include "nvml/abi.hpp"
#include "nvml/entry_points.hpp"

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace gua::nvml {

/// True for the answers that mean "this card or driver cannot tell" rather than a failure:
/// NOT_SUPPORTED, and FUNCTION_NOT_FOUND from an entry point the library lacks.
inline bool unsupported(nvmlReturn_t rc) {
    return rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND;
}

/// Which name of an entry point was bound.
struct BoundSymbol {
    Entry id;
    const char* name = nullptr; ///< nullptr when no variant exists in the library
    int variant = -1;           ///< position in the entry's name list (0 = newest), -1 = absent
};

/// An initialized NVML library. Owns the dlopen handle; the destructor calls nvmlShutdown and
/// dlclose. Thread-safe as NVML itself is: the sampler calls it from one thread, and
/// NvmlEventStream waits for events on a second one (nvmlEventSetWait_v2 only).
class Library {
  public:
    /// Loads `path_override`, or libnvidia-ml.so.1 when it is empty, binds every entry point and
    /// calls nvmlInit. Errors: library missing, a required symbol missing, init failure (for
    /// NVML_ERROR_LIB_RM_VERSION_MISMATCH a message naming the driver/library mismatch; callers
    /// may retry later). The library is closed on every failure path.
    static Result<std::unique_ptr<Library>> open(const std::string& path_override);

    ~Library();
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;

    /// The path (or soname) that was loaded.
    const std::string& path() const { return m_path; }

    /// Calls the bound variant of entry point E; returns NVML_ERROR_FUNCTION_NOT_FOUND when the
    /// library has none. Callers pass arguments matching EntrySignature<E>.
    template <Entry E, typename... Args> nvmlReturn_t call(Args... args) const {
        using Fn = typename EntrySignature<E>::type;
        static_assert(k_entry_points[entry_index(E)].need != Need::probe, "probe-only entry");
        static_assert(std::is_same_v<std::invoke_result_t<Fn*, Args...>, nvmlReturn_t>);
        void* address = m_symbols[entry_index(E)].address;
        if (address == nullptr) {
            return NVML_ERROR_FUNCTION_NOT_FOUND;
        }
        return reinterpret_cast<Fn*>(address)(args...);
    }

    /// True when some name variant of `e` was found.
    bool has(Entry e) const { return m_symbols[entry_index(e)].address != nullptr; }

    /// The bound name variant of `e` (0 = newest), or -1 when absent.
    int variant(Entry e) const { return m_symbols[entry_index(e)].variant; }

    /// Which name of every entry point was bound, in entry-list order (for diagnostics).
    std::array<BoundSymbol, k_entry_count> bindings() const;

    /// Bytes per entry the driver writes for a running-process list entry point (16, 24 or 32),
    /// by nvitop's rule: _v3 with nvmlDeviceGetConfComputeMemSizeInfo and without
    /// nvmlDeviceGetRunningProcessDetailList is R535.43–.86, which writes 32-byte entries.
    std::size_t process_info_stride(Entry process_list) const;

    /// The driver's text for a return code (never null; unknown codes included).
    std::string error_string(nvmlReturn_t rc) const;

    /// The driver version, e.g. "560.35.05"; empty when the library cannot say.
    std::string driver_version() const;

  private:
    struct Symbol {
        void* address = nullptr;
        int variant = -1;
    };

    Library(void* handle, std::string path) : m_handle(handle), m_path(std::move(path)) {}

    void* m_handle;
    std::string m_path;
    std::array<Symbol, k_entry_count> m_symbols{};
    bool m_initialized = false;
};

} // namespace gua::nvml
