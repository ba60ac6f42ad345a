// Error helpers shared by the gua.toml section parsers: every message names file, line and key.
#pragma once

#include "core/result.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <set>
#include <string>

namespace gua::config {

/// "path:line: key: what", at the position of `node`.
inline Error at(const std::string& path, const toml::node& node, const std::string& key,
                const std::string& what) {
    return Error{fmt::format("{}:{}: {}: {}", path, node.source().begin.line, key, what)};
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
