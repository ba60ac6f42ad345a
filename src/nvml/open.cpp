// SPDX-License-Identifier: Apache-2.0
// open_nvml_source: picks the library path (flag, then environment, then the soname) and wraps it.
#include "nvml/open.hpp"

#include "nvml/library.hpp"
#include "nvml/nvml_source.hpp"

#include <cstdlib>

namespace gua::nvml {

Result<std::unique_ptr<telemetry::DeviceSource>>
open_nvml_source(const std::string& library_override) {
    std::string path = library_override;
    if (path.empty()) {
        const char* env = std::getenv(k_library_env);
        path = env != nullptr ? env : "";
    }
    auto library = Library::open(path);
    if (!library) {
        return library.error();
    }
    return std::unique_ptr<telemetry::DeviceSource>(
        std::make_unique<NvmlSource>(std::move(library).value()));
}

std::vector<FabricReading> read_fabric(telemetry::DeviceSource& source) {
    auto* nvml = dynamic_cast<NvmlSource*>(&source);
    return nvml != nullptr ? nvml->read_fabric() : std::vector<FabricReading>{};
}

} // namespace gua::nvml
