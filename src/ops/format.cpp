// Byte and GPU-time formatting.
#include "ops/format.hpp"

#include <fmt/format.h>

namespace gua::ops {

std::string format_bytes(std::uint64_t bytes) {
    const double b = static_cast<double>(bytes);
    if (bytes < 1024) {
        return fmt::format("{} B", bytes);
    }
    if (b < 1024.0 * 1024.0) {
        return fmt::format("{:.1f} KiB", b / 1024.0);
    }
    if (b < 1024.0 * 1024.0 * 1024.0) {
        return fmt::format("{:.1f} MiB", b / (1024.0 * 1024.0));
    }
    return fmt::format("{:.1f} GiB", b / (1024.0 * 1024.0 * 1024.0));
}

std::string format_gpu_time(double hours) {
    if (hours < 1.0) {
        return fmt::format("{:.1f} GPU-minutes", hours * 60.0);
    }
    return fmt::format("{:.2f} GPU-hours", hours);
}

} // namespace gua::ops
