// SPDX-License-Identifier: Apache-2.0
// Error helpers shared by the gua.toml section parsers: every message names file, line and key.
#pragma once

#include "core/result.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>

namespace gua::config {

/// "path:line: key: what", at the position of `node`.
inline Error at(const std::string& path, const toml::node& node, const std::string& key,
                const std::string& what) {
    return Error{fmt::format("{}:{}: {}: {}", path, node.source().begin.line, key, what)};
}

/// The value of a TOML integer, or nothing for any other node. toml++'s value<int64_t>() also
/// converts floats, truncating 2.5 to 2 and with undefined behaviour past the int64 range; a
/// whole-number setting written as a float is an error instead.
inline std::optional<std::int64_t> whole_number(const toml::node& node) {
    if (const toml::value<std::int64_t>* i = node.as_integer()) {
        return i->get();
    }
    return std::nullopt;
}

/// Fails on the first key of `table` (named `name`, empty for the root) not in `allowed`.
inline Result<void> check_keys(const std::string& path, const toml::table& table,
                               const std::string& name, const std::set<std::string>& allowed) {
    for (const auto& [key, node] : table) {
        if (!allowed.contains(std::string(key.str()))) {
            const std::string full =
                name.empty() ? std::string(key.str()) : name + "." + std::string(key.str());
            return at(path, node, full, "unknown key");
        }
    }
    return {};
}

} // namespace gua::config
