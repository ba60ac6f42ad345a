// SPDX-License-Identifier: Apache-2.0
// [policy] and [[policy.rule]]: every key checked, errors with file and line like the rest of
// gua.toml.
#include "config/policy_section.hpp"

#include "config/toml_errors.hpp"
#include "core/duration.hpp"

#include <fmt/format.h>

#include <set>

namespace gua::config {

namespace {

Result<std::vector<std::string>> string_list(const std::string& path, const toml::node& node,
                                             const std::string& key) {
    const toml::array* array = node.as_array();
    std::vector<std::string> out;
    if (array == nullptr) {
        return at(path, node, key, "expected a list of strings");
    }
    for (const toml::node& item : *array) {
        const std::optional<std::string> v = item.value<std::string>();
        if (!v || v->empty()) {
            return at(path, item, key, "expected a list of non-empty strings");
        }
        out.push_back(*v);
    }
    return out;
}

Result<DurationUs> duration_at(const std::string& path, const toml::node& node,
                               const std::string& key) {
    const std::optional<std::string> v = node.value<std::string>();
    const Result<DurationUs> d = v ? parse_duration(*v) : Result<DurationUs>(Error{""});
    if (!d) {
        return at(path, node, key, "expected a duration such as \"2h\" or \"30s\"");
    }
    return d.value();
}

Result<policy::Rule> parse_rule(const toml::table& t, const std::string& path,
                                const std::string& name) {
    if (auto r = check_keys(path, t, name,
                            {"name", "after", "min_memory", "users", "groups", "commands",
                             "containers", "gpus", "action", "dry_run", "grace"});
        !r) {
        return r.error();
    }
    policy::Rule rule;
    const std::optional<std::string> rule_name = t["name"].value<std::string>();
    if (!rule_name || rule_name->empty()) {
        return at(path, t, name + ".name", "every rule needs a name (a non-empty string)");
    }
    rule.name = *rule_name;
    const toml::node* after = t.get("after");
    if (after == nullptr) {
        return at(path, t, name + ".after", "every rule needs `after`, e.g. after = \"2h\"");
    }
    Result<DurationUs> after_us = duration_at(path, *after, name + ".after");
    if (!after_us) {
        return after_us.error();
    }
    rule.after_us = after_us.value();
    const toml::node* action = t.get("action");
    const std::optional<policy::Action> parsed =
        action != nullptr ? policy::parse_action(action->value_or(std::string{})) : std::nullopt;
    if (!parsed) {
        return at(path, action != nullptr ? *action : static_cast<const toml::node&>(t),
                  name + ".action", "expected \"log\", \"notify\" or \"terminate\"");
    }
    rule.action = *parsed;
    if (const toml::node* n = t.get("min_memory")) {
        const std::optional<std::string> text = n->value<std::string>();
        const Result<std::int64_t> mib =
            text ? policy::parse_memory_mib(*text) : Result<std::int64_t>(Error{"not a string"});
        if (!mib) {
            return at(path, *n, name + ".min_memory", "expected a memory size such as \"8GiB\"");
        }
        rule.min_memory_mib = mib.value();
    }
    for (auto [key, list] :
         {std::pair{"users", &rule.users}, std::pair{"groups", &rule.groups},
          std::pair{"commands", &rule.commands}, std::pair{"containers", &rule.containers},
          std::pair{"gpus", &rule.gpus}}) {
        if (const toml::node* n = t.get(key)) {
            Result<std::vector<std::string>> v = string_list(path, *n, name + "." + key);
            if (!v) {
                return v.error();
            }
            *list = std::move(v).value();
        }
    }
    if (const toml::node* n = t.get("dry_run")) {
        const std::optional<bool> v = n->value<bool>();
        if (!v) {
            return at(path, *n, name + ".dry_run", "expected true or false");
        }
        rule.dry_run = *v;
    }
    if (const toml::node* n = t.get("grace")) {
        Result<DurationUs> grace = duration_at(path, *n, name + ".grace");
        if (!grace) {
            return grace.error();
        }
        rule.grace_us = grace.value();
    }
    return rule;
}

Result<void> parse_globals(const toml::table& t, const std::string& path, policy::PolicyConfig& c) {
    if (const toml::node* n = t.get("enabled")) {
        const std::optional<bool> v = n->value<bool>();
        if (!v) {
            return at(path, *n, "policy.enabled", "expected true or false");
        }
        c.enabled = *v;
    }
    if (const toml::node* n = t.get("max_actions_per_hour")) {
        const std::optional<std::int64_t> v = whole_number(*n);
        if (!v || *v < 0 || *v > 1000000) {
            return at(path, *n, "policy.max_actions_per_hour", "expected a whole number >= 0");
        }
        c.max_actions_per_hour = static_cast<int>(*v);
    }
    if (const toml::node* n = t.get("notify_command")) {
        const std::optional<std::string> v = n->value<std::string>();
        if (!v) {
            return at(path, *n, "policy.notify_command", "expected a shell command (a string)");
        }
        c.notify_command = *v;
    }
    for (auto [key, list] : {std::pair{"exempt_users", &c.exempt_users},
                             std::pair{"exempt_commands", &c.exempt_commands},
                             std::pair{"exempt_containers", &c.exempt_containers}}) {
        if (const toml::node* n = t.get(key)) {
            Result<std::vector<std::string>> v =
                string_list(path, *n, std::string("policy.") + key);
            if (!v) {
                return v.error();
            }
            *list = std::move(v).value();
        }
    }
    return {};
}

} // namespace

Result<void> parse_policy(const std::string& path, const toml::table& table,
                          policy::PolicyConfig& out) {
    if (auto r = check_keys(path, table, "policy",
                            {"enabled", "max_actions_per_hour", "notify_command", "exempt_users",
                             "exempt_commands", "exempt_containers", "rule"});
        !r) {
        return r.error();
    }
    policy::PolicyConfig c;
    if (auto r = parse_globals(table, path, c); !r) {
        return r.error();
    }
    const toml::node* rules = table.get("rule");
    if (rules == nullptr) {
        out = std::move(c);
        return {};
    }
    const toml::array* array = rules->as_array();
    if (array == nullptr || !array->is_array_of_tables()) {
        return at(path, *rules, "policy.rule", "expected [[policy.rule]] tables");
    }
    std::set<std::string> names;
    for (std::size_t i = 0; i < array->size(); ++i) {
        const toml::table& t = *array->get(i)->as_table();
        Result<policy::Rule> rule = parse_rule(t, path, fmt::format("policy.rule[{}]", i));
        if (!rule) {
            return rule.error();
        }
        if (!names.insert(rule.value().name).second) {
            return at(path, t, fmt::format("policy.rule[{}].name", i),
                      fmt::format("duplicate rule name \"{}\"", rule.value().name));
        }
        c.rules.push_back(std::move(rule).value());
    }
    out = std::move(c);
    return {};
}

} // namespace gua::config
