// SPDX-License-Identifier: Apache-2.0
// The entry point the daemon uses to read real GPUs: NVML behind the DeviceSource seam, without
// exposing any NVML type.
#pragma once

#include "core/result.hpp"
#include "telemetry/device_source.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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

/// The interconnect and bus health of one physical GPU, read now (docs/faults.md). Every
/// reading the driver cannot give is nullopt, never 0.
struct FabricReading {
    std::string uuid;
    int index = 0;
    std::optional<unsigned> pcie_gen, pcie_gen_max;     ///< current and max (device and slot)
    std::optional<unsigned> pcie_width, pcie_width_max; ///< lanes, current and max
    std::optional<bool> remap_failure;                  ///< a row remap ever failed (field 145)
    std::optional<bool> persistence;                    ///< persistence mode on
    std::optional<unsigned> nvlink_links;               ///< links the driver answers for
    std::optional<unsigned> nvlink_active;              ///< of them, active
    /// Σ over the links of the data-link replay, recovery and CRC (flit) error counters since
    /// the driver loaded.
    std::optional<std::uint64_t> nvlink_replay, nvlink_recovery, nvlink_crc;
};

/// The fabric readings of `source`'s physical GPUs; empty when it is not an NVML source.
std::vector<FabricReading> read_fabric(telemetry::DeviceSource& source);

} // namespace gua::nvml
