// SPDX-License-Identifier: Apache-2.0
// Policy vocabulary: action names and memory sizes as written in gua.toml.
#include "policy/rule.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <utility>

namespace gua::policy {

const char* to_string(Action action) {
    switch (action) {
    case Action::notify:
        return "notify";
    case Action::terminate:
        return "terminate";
    case Action::log:
        break;
    }
    return "log";
}

std::optional<Action> parse_action(std::string_view text) {
    for (const Action a : {Action::log, Action::notify, Action::terminate}) {
        if (text == to_string(a)) {
            return a;
        }
    }
    return std::nullopt;
}

Result<std::int64_t> parse_memory_mib(std::string_view text) {
    static constexpr std::array<std::pair<std::string_view, double>, 4> k_units{
        {{"TiB", 1024.0 * 1024.0}, {"GiB", 1024.0}, {"MiB", 1.0}, {"", 1.0}}};
    for (const auto& [unit, mib] : k_units) {
        if (!text.ends_with(unit)) {
            continue;
        }
        const std::string_view number = text.substr(0, text.size() - unit.size());
        double value = 0;
        const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
        if (number.empty() || ec != std::errc{} || end != number.data() + number.size() ||
            !(value > 0) || value > 1e9) {
            break;
        }
        return static_cast<std::int64_t>(std::llround(value * mib));
    }
    return Error{"expected a memory size such as \"8GiB\" or \"512MiB\", not \"" +
                 std::string(text) + "\""};
}

} // namespace gua::policy
