// SPDX-License-Identifier: Apache-2.0
// The entry point the daemon uses to read real GPUs: NVML behind the DeviceSource seam, without
// exposing any NVML type.
#pragma once

#include "core/result.hpp"
#include "telemetry/device_source.hpp"

#include <memory>
#include <string>

namespace gua::nvml {

/// The soname loaded when no path is given (never the unversioned .so, which may be a CUDA stub).
inline constexpr const char* k_default_library = "libnvidia-ml.so.1";

/// Environment variable naming the NVML library when no --nvml-library flag is given.
inline constexpr const char* k_library_env = "GUA_NVML_LIBRARY";

/// Opens NVML as a DeviceSource from `library_override` if non-empty, else from $GUA_NVML_LIBRARY
/// if set and non-empty, else libnvidia-ml.so.1. Errors as nvml::Library::open (missing driver,
/// driver/library version mismatch — retry later —, failed init).
Result<std::unique_ptr<telemetry::DeviceSource>>
open_nvml_source(const std::string& library_override);

} // namespace gua::nvml
