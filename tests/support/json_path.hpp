// SPDX-License-Identifier: Apache-2.0
// A JSON value found by a dotted path, as the HTML pages name the JSON field of each number.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

namespace gua::test {

/// The value of `root` at a dotted path ("gpus.0.states.active": object keys and array
/// indices); nullptr when there is none.
inline const nlohmann::json* json_at(const nlohmann::json& root, const std::string& path) {
    const nlohmann::json* j = &root;
    std::size_t start = 0;
    while (start <= path.size()) {
        const std::size_t dot = std::min(path.find('.', start), path.size());
        const std::string key = path.substr(start, dot - start);
        if (j->is_array() && !key.empty() &&
            key.find_first_not_of("0123456789") == std::string::npos) {
            const std::size_t i = std::stoul(key);
            if (i >= j->size()) {
                return nullptr;
            }
            j = &(*j)[i];
        } else if (j->is_object() && j->contains(key)) {
            j = &(*j)[key];
        } else {
            return nullptr;
        }
        start = dot + 1;
    }
    return j;
}

} // namespace gua::test
