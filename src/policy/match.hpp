// SPDX-License-Identifier: Apache-2.0
// Matching of rule and exemption lists against a candidate (shell patterns, prefixes, GPU refs).
#pragma once

#include "policy/engine.hpp"

#include <string>
#include <vector>

namespace gua::policy {

/// True when `text` matches one of `patterns` (fnmatch shell patterns; plain names match exactly).
bool matches_any(const std::vector<std::string>& patterns, const std::string& text);

/// True when a non-empty `container_id` starts with or matches one of `patterns`.
bool container_matches(const std::vector<std::string>& patterns, const std::string& container_id);

/// True when one of `gpus` has an index equal to, or a uuid starting with, one of `patterns`.
bool gpu_matches(const std::vector<std::string>& patterns, const std::vector<GpuRef>& gpus);

/// True when every non-empty match list of `rule` matches `c` (and its memory is large enough).
bool rule_matches(const Rule& rule, const Candidate& c);

} // namespace gua::policy
