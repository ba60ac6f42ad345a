// SPDX-License-Identifier: Apache-2.0
// Rule matching: every non-empty list must match; within a list any entry may.
#include "policy/match.hpp"

#include <algorithm>
#include <fnmatch.h>

namespace gua::policy {

bool matches_any(const std::vector<std::string>& patterns, const std::string& text) {
    return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
        return p == text || fnmatch(p.c_str(), text.c_str(), 0) == 0;
    });
}

bool container_matches(const std::vector<std::string>& patterns, const std::string& container_id) {
    return !container_id.empty() &&
           std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
               return container_id.starts_with(p) ||
                      fnmatch(p.c_str(), container_id.c_str(), 0) == 0;
           });
}

bool gpu_matches(const std::vector<std::string>& patterns, const std::vector<GpuRef>& gpus) {
    return std::any_of(gpus.begin(), gpus.end(), [&](const GpuRef& g) {
        return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
            return p == std::to_string(g.index) || g.uuid.starts_with(p);
        });
    });
}

bool rule_matches(const Rule& rule, const Candidate& c) {
    if (rule.min_memory_mib && (!c.memory_mib || *c.memory_mib < *rule.min_memory_mib)) {
        return false;
    }
    if (!rule.users.empty() && !matches_any(rule.users, c.identity.user)) {
        return false;
    }
    if (!rule.groups.empty() &&
        std::none_of(c.groups.begin(), c.groups.end(),
                     [&](const std::string& g) { return matches_any(rule.groups, g); })) {
        return false;
    }
    if (!rule.commands.empty() && !matches_any(rule.commands, c.identity.command)) {
        return false;
    }
    if (!rule.containers.empty() && !container_matches(rule.containers, c.identity.container_id)) {
        return false;
    }
    return rule.gpus.empty() || gpu_matches(rule.gpus, c.gpus);
}

} // namespace gua::policy
