// SPDX-License-Identifier: Apache-2.0
// CLI11 validators shared by the subcommands: one check per kind of value, one short message.
#pragma once

#include "core/time.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gua::cli {

/// Rejects an empty value ("--gpu ''"): "must not be empty".
CLI::Validator non_empty();

/// Accepts a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with "__").
CLI::Validator prometheus_label_name();

/// Accepts a finite price per GPU-hour from 0 to 1000 (what audit::to_micros stores).
CLI::Validator price_per_gpu_hour();

/// Adds option `name` taking a duration above 0 ("30s", "2m") into `target`; anything else is
/// one line: "--NAME: expected a duration above 0" or the parser's message.
CLI::Option* add_positive_duration(CLI::App& cmd, const std::string& name, DurationUs& target,
                                   const std::string& help);

/// The closest name in `names` to `typed` (edit distance at most 2, or a prefix of it).
std::optional<std::string> closest_name(const std::string& typed,
                                        const std::vector<std::string>& names);

} // namespace gua::cli
