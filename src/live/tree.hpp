// SPDX-License-Identifier: Apache-2.0
// `gua top`'s process tree: the holders under their parent processes up to init, read from /proc,
// so that a holder's session (a shell, tmux, a notebook server) shows above it.
#pragma once

#include "live/model.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gua::live {

/// What the tree needs of one process.
struct ProcNode {
    std::uint32_t ppid = 0;
    std::string user;
    std::string command;
};

/// The tree rows of `holders` (in their order within each parent), their ancestors found through
/// `lookup` (nullopt: gone). A pid with several holder rows (several cards) shows them all in one
/// place. Roots and siblings in pid order; at most 32 levels.
std::vector<TreeRow> tree_rows(const std::vector<HolderNow>& holders,
                               const std::function<std::optional<ProcNode>(std::uint32_t)>& lookup);

/// tree_rows over <proc_root>.
std::vector<TreeRow> proc_tree_rows(const std::vector<HolderNow>& holders,
                                    const std::string& proc_root = "/proc");

} // namespace gua::live
