// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: command-line durations (--interval, --since) and ISO 8601 times (--from,
// --start), with the properties their formatters promise.
#include "core/duration.hpp"
#include "core/time.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (const gua::Result<gua::DurationUs> d = gua::parse_duration(text)) {
        // Accepted durations are positive and formattable.
        if (d.value() <= 0 || gua::format_duration(d.value()).empty()) {
            std::abort();
        }
    }
    if (const gua::Result<gua::TimeUs> t = gua::parse_iso8601(text)) {
        // A parsed time formats to whole seconds, and that text parses to the same second.
        const gua::TimeUs whole =
            t.value() -
            ((t.value() % gua::k_us_per_second) + gua::k_us_per_second) % gua::k_us_per_second;
        const std::string formatted = gua::format_iso8601(t.value());
        const gua::Result<gua::TimeUs> again = gua::parse_iso8601(formatted);
        if (formatted.size() == 20 && (!again || again.value() != whole)) {
            std::abort();
        }
    }
    return 0;
}
