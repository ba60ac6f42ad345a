// SPDX-License-Identifier: Apache-2.0
// Policy configuration: rules that act on processes idle-holding a GPU, and the global limits and
// exemptions around them (the [policy] and [[policy.rule]] tables of gua.toml, docs/policy.md).
#pragma once

#include "core/result.hpp"
#include "core/time.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gua::policy {

/// What a rule does when it fires.
enum class Action : std::uint8_t { log = 0, notify = 1, terminate = 2 };

/// "log", "notify" or "terminate".
const char* to_string(Action action);

/// Parses "log", "notify" or "terminate"; nullopt for anything else.
std::optional<Action> parse_action(std::string_view text);

/// One rule. Empty match lists match everything; a non-empty list must match (all lists AND).
struct Rule {
    std::string name;
    DurationUs after_us = 0;                    ///< continuous idle-held time before it fires
    std::optional<std::int64_t> min_memory_mib; ///< only processes holding at least this much
    std::vector<std::string> users;             ///< user names or shell patterns (fnmatch)
    std::vector<std::string> groups;     ///< Unix groups of the user (primary or supplementary)
    std::vector<std::string> commands;   ///< command names (comm) or patterns
    std::vector<std::string> containers; ///< container id prefixes or patterns
    std::vector<std::string> gpus;       ///< GPU indexes ("0") or uuid prefixes
    Action action = Action::log;
    bool dry_run = true;                        ///< record only; a new rule starts here
    DurationUs grace_us = 30 * k_us_per_second; ///< terminate: SIGTERM → SIGKILL delay
};

/// The whole policy. Off unless `enabled`.
struct PolicyConfig {
    bool enabled = false;
    int max_actions_per_hour = 10; ///< real notify/terminate actions in any sliding hour
    std::string notify_command;    ///< run by /bin/sh -c with GUA_* variables; empty: ttys only
    std::vector<std::string> exempt_users;
    std::vector<std::string> exempt_commands;
    std::vector<std::string> exempt_containers;
    std::vector<Rule> rules;
};

/// Parses a memory size: "8GiB", "512MiB", "1.5GiB", "1TiB" or a plain number of MiB. Errors on
/// anything else, on negative sizes and on zero.
Result<std::int64_t> parse_memory_mib(std::string_view text);

} // namespace gua::policy
