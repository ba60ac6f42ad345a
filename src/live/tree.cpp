// SPDX-License-Identifier: Apache-2.0
// Building `gua top`'s process tree from the holders' ancestry.
#include "live/tree.hpp"

#include "identity/user.hpp"
#include "live/proc_usage.hpp"

#include <map>
#include <set>

namespace gua::live {

namespace {

constexpr int k_max_depth = 32;

struct Forest {
    std::map<std::uint32_t, std::set<std::uint32_t>> children; ///< 0: the roots
    std::map<std::uint32_t, ProcNode> ancestors;
    std::map<std::uint32_t, std::vector<std::size_t>> rows; ///< holder rows by pid
};

void emit(const Forest& f, std::uint32_t pid, int depth, std::vector<TreeRow>& out) {
    if (const auto rows = f.rows.find(pid); rows != f.rows.end()) {
        for (const std::size_t i : rows->second) {
            out.push_back(TreeRow{depth, i, pid, "", ""});
        }
    } else if (const auto a = f.ancestors.find(pid); a != f.ancestors.end()) {
        out.push_back(TreeRow{depth, std::nullopt, pid, a->second.user, a->second.command});
    }
    if (const auto kids = f.children.find(pid); kids != f.children.end() && depth < k_max_depth) {
        for (const std::uint32_t kid : kids->second) {
            emit(f, kid, depth + 1, out);
        }
    }
}

} // namespace

std::vector<TreeRow>
tree_rows(const std::vector<HolderNow>& holders,
          const std::function<std::optional<ProcNode>(std::uint32_t)>& lookup) {
    Forest f;
    for (std::size_t i = 0; i < holders.size(); ++i) {
        f.rows[holders[i].pid].push_back(i);
    }
    std::set<std::uint32_t> placed;
    for (const auto& [pid, rows] : f.rows) {
        std::uint32_t at = pid;
        for (int depth = 0; depth < k_max_depth && placed.insert(at).second; ++depth) {
            const std::optional<ProcNode> node = lookup(at);
            const std::uint32_t parent =
                node && node->ppid > 1 && node->ppid != at ? node->ppid : 0;
            f.children[parent].insert(at);
            if (parent == 0) {
                break;
            }
            if (!f.rows.contains(parent)) {
                const std::optional<ProcNode> up = lookup(parent);
                f.ancestors[parent] = up.value_or(ProcNode{0, "?", "?"});
            }
            at = parent;
        }
    }
    std::vector<TreeRow> out;
    if (const auto roots = f.children.find(0); roots != f.children.end()) {
        for (const std::uint32_t root : roots->second) {
            emit(f, root, 0, out);
        }
    }
    return out;
}

std::vector<TreeRow> proc_tree_rows(const std::vector<HolderNow>& holders,
                                    const std::string& proc_root) {
    return tree_rows(holders, [&](std::uint32_t pid) -> std::optional<ProcNode> {
        const std::optional<ProcSample> s = read_proc_sample(pid, proc_root);
        if (!s) {
            return std::nullopt;
        }
        return ProcNode{
            s->ppid,
            identity::user_label(s->uid, s->uid ? identity::passwd_name(*s->uid) : std::nullopt),
            s->comm};
    });
}

} // namespace gua::live
