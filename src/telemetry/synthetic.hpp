// SPDX-License-Identifier: Apache-2.0
// Synthetic device sources: deterministic workloads for `gua demo`, tests and benchmarks.
#pragma once

#include "telemetry/device_source.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gua::telemetry {

/// A named synthetic workload and the demo settings that show it best.
struct WorkloadInfo {
    std::string_view name;
    std::string_view description;
    int default_ticks;
    DurationUs default_interval_us;
};

/// All workloads, in the order `gua demo --help` lists them.
const std::vector<WorkloadInfo>& workloads();

/// Creates the source for workload `name` (nullptr when unknown). Time is measured from
/// `origin`; `interval_us` is the tick length the workload is phrased in; `seed` varies the
/// random parts (the "classic" workload has none).
std::unique_ptr<DeviceSource> make_synthetic_source(std::string_view name, TimeUs origin,
                                                    DurationUs interval_us, std::uint64_t seed);

} // namespace gua::telemetry
