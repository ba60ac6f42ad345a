// SPDX-License-Identifier: Apache-2.0
// GPU-time formatting.
#include "ops/format.hpp"

#include <fmt/format.h>

namespace gua::ops {

std::string format_gpu_time(double hours) {
    if (hours < 1.0) {
        return fmt::format("{:.1f} GPU-minutes", hours * 60.0);
    }
    return fmt::format("{:.2f} GPU-hours", hours);
}

} // namespace gua::ops
