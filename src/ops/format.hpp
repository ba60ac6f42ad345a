// SPDX-License-Identifier: Apache-2.0
// Amounts of GPU time in the words the operations commands print (sizes: core/units.hpp).
#pragma once

#include <cstdint>
#include <string>

namespace gua::ops {

/// GPU time given in hours: "12.5 GPU-minutes" below one hour, "3.20 GPU-hours" from there.
std::string format_gpu_time(double hours);

} // namespace gua::ops
