// SPDX-License-Identifier: Apache-2.0
// [allocations]: where gua reads which scheduler allocation owns each card.
#include "config/allocations_section.hpp"

#include "config/toml_errors.hpp"

#include <algorithm>

namespace gua::config {
namespace {

Result<void> add_dir(const std::string& path, const toml::node& node, alloc::Settings& out) {
    const std::optional<std::string> dir = node.value<std::string>();
    if (!dir) {
        return at(path, node, "allocations.mapping_dir", "expected a directory path (a string)");
    }
    if (auto r = alloc::validate_source_path("path", *dir); !r) {
        return at(path, node, "allocations.mapping_dir", r.error().message);
    }
    if (std::find(out.mapping_dirs.begin(), out.mapping_dirs.end(), *dir) ==
        out.mapping_dirs.end()) {
        out.mapping_dirs.push_back(*dir);
    }
    return {};
}

} // namespace

Result<void> parse_allocations(const std::string& path, const toml::table& table,
                               alloc::Settings& out) {
    if (auto r = check_keys(path, table, "allocations", {"mapping_dir", "kubelet_socket"}); !r) {
        return r.error();
    }
    if (const toml::node* n = table.get("mapping_dir")) {
        if (const toml::array* list = n->as_array()) {
            for (const toml::node& item : *list) {
                if (auto r = add_dir(path, item, out); !r) {
                    return r;
                }
            }
        } else if (auto r = add_dir(path, *n, out); !r) {
            return r;
        }
    }
    if (const toml::node* n = table.get("kubelet_socket")) {
        const std::optional<std::string> socket = n->value<std::string>();
        if (!socket) {
            return at(path, *n, "allocations.kubelet_socket", "expected a socket path (a string)");
        }
        if (auto r = alloc::validate_source_path("path", *socket); !r) {
            return at(path, *n, "allocations.kubelet_socket", r.error().message);
        }
        out.kubelet_socket = *socket;
    }
    return {};
}

} // namespace gua::config
