// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: gua.toml text through the whole configuration parser (every section, the
// policy rules, the validation of each value). Errors are fine; crashes, hangs and exceptions
// other than the parser's Result are not.
#include "config/config.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const gua::Result<gua::config::Config> c = gua::config::parse_config(text, "fuzz.toml");
    if (c) {
        // Accepted thresholds are finite and in range (the daemon stores them NOT NULL).
        const gua::audit::Thresholds& t = c.value().thresholds;
        if (!std::isfinite(t.active_util_pct) || t.active_util_pct < 0 || t.active_util_pct > 100 ||
            t.held_mib < 0) {
            std::abort();
        }
    } else if (!c.error().message.starts_with("fuzz.toml")) {
        std::abort(); // every error names the file (output escapes it onto one line)
    }
    return 0;
}
