// Sizes and amounts of GPU time in the words the operations commands print.
#pragma once

#include <cstdint>
#include <string>

namespace gua::ops {

/// "512 B", "48.0 KiB", "1.2 MiB", "3.4 GiB".
std::string format_bytes(std::uint64_t bytes);

/// GPU time given in hours: "12.5 GPU-minutes" below one hour, "3.20 GPU-hours" from there.
std::string format_gpu_time(double hours);

} // namespace gua::ops
