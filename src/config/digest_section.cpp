// SPDX-License-Identifier: Apache-2.0
// [digest]: recipients, the idle-held threshold below which a user gets no digest, team grouping.
#include "config/digest_section.hpp"

#include "config/toml_errors.hpp"

#include <algorithm>
#include <cmath>

namespace gua::config {
namespace {

/// The address at `node`, or an error: a non-empty string without control characters (a line
/// break in a mail header would start another header).
Result<std::string> address_of(const std::string& path, const toml::node& node,
                               const std::string& key) {
    const std::optional<std::string> v = node.value<std::string>();
    const auto control = [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; };
    if (!v || v->empty() || std::any_of(v->begin(), v->end(), control)) {
        return at(path, node, key, "expected an address on one line, e.g. \"alice@example.org\"");
    }
    return *v;
}

Result<void> parse_recipients(const std::string& path, const toml::node& node,
                              DigestSettings& out) {
    const toml::table* t = node.as_table();
    if (t == nullptr) {
        return at(path, node, "digest.recipients",
                  "expected a table of name = \"address\", e.g. alice = \"alice@example.org\"");
    }
    for (const auto& [key, value] : *t) {
        const std::string name(key.str());
        Result<std::string> a = address_of(path, value, "digest.recipients." + name);
        if (!a) {
            return a.error();
        }
        out.recipients[name] = a.value();
    }
    return {};
}

} // namespace

Result<void> parse_digest(const std::string& path, const toml::table& table, DigestSettings& out) {
    if (auto r = check_keys(path, table, "digest",
                            {"recipients", "admin", "min_idle_held_hours", "group_by"});
        !r) {
        return r.error();
    }
    if (const toml::node* n = table.get("recipients")) {
        if (auto r = parse_recipients(path, *n, out); !r) {
            return r;
        }
    }
    if (const toml::node* n = table.get("admin")) {
        Result<std::string> a = address_of(path, *n, "digest.admin");
        if (!a) {
            return a.error();
        }
        out.admin = a.value();
    }
    if (const toml::node* n = table.get("min_idle_held_hours")) {
        const std::optional<double> v = n->is_number() ? n->value<double>() : std::nullopt;
        if (!v || !std::isfinite(*v) || *v < 0) {
            return at(path, *n, "digest.min_idle_held_hours",
                      "expected GPU-hours, a number of 0 or more, e.g. 1.5");
        }
        out.min_idle_held_hours = *v;
    }
    if (const toml::node* n = table.get("group_by")) {
        const std::optional<std::string> v = n->value<std::string>();
        if (!v || (*v != "team" && *v != "namespace" && *v != "none")) {
            return at(path, *n, "digest.group_by", "expected \"team\", \"namespace\" or \"none\"");
        }
        out.group_by = *v;
    }
    return {};
}

} // namespace gua::config
