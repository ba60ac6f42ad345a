// SPDX-License-Identifier: Apache-2.0
// Pure parsing of Slurm's cgroup paths (v1, v2, SLUID, multiple-slurmd) and job-id resolution.
#include "alloc/slurm_cgroup.hpp"

#include <algorithm>

namespace gua::alloc {
namespace {

constexpr std::size_t k_min_sluid_chars = 8;
constexpr std::size_t k_max_sluid_chars = 24;

bool is_decimal_digit(char c) {
    return c >= '0' && c <= '9';
}

bool all_digits(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), is_decimal_digit);
}

// "s" and upper-case base32 characters: Slurm 26.05's job directory.
bool is_sluid(std::string_view text) {
    if (!text.starts_with('s') || text.size() < 1 + k_min_sluid_chars ||
        text.size() > 1 + k_max_sluid_chars) {
        return false;
    }
    return std::all_of(text.begin() + 1, text.end(),
                       [](char c) { return is_decimal_digit(c) || (c >= 'A' && c <= 'Z'); });
}

std::vector<std::string_view> components(std::string_view path) {
    std::vector<std::string_view> parts;
    while (!path.empty()) {
        const std::size_t slash = path.find('/');
        if (const std::string_view part = path.substr(0, slash); !part.empty()) {
            parts.push_back(part);
        }
        path.remove_prefix(slash == std::string_view::npos ? path.size() : slash + 1);
    }
    return parts;
}

// A component that roots Slurm's tree: "slurm", "slurm_<node>", "slurmstepd.scope",
// "<node>_slurmstepd.scope"; fills `node` for the multiple-slurmd forms.
bool is_slurm_root(std::string_view part, std::string& node) {
    constexpr std::string_view v1_prefix = "slurm_";
    constexpr std::string_view v2_suffix = "_slurmstepd.scope";
    if (part == "slurm" || part == "slurmstepd.scope") {
        return true;
    }
    if (part.starts_with(v1_prefix) && part.size() > v1_prefix.size()) {
        node = part.substr(v1_prefix.size());
        return true;
    }
    if (part.ends_with(v2_suffix) && part.size() > v2_suffix.size()) {
        node = part.substr(0, part.size() - v2_suffix.size());
        return true;
    }
    return false;
}

} // namespace

std::optional<SlurmCgroup> parse_slurm_cgroup_path(std::string_view path) {
    const std::vector<std::string_view> parts = components(path);
    for (std::size_t root = 0; root < parts.size(); ++root) {
        SlurmCgroup found;
        if (!is_slurm_root(parts[root], found.node)) {
            continue;
        }
        std::size_t at = root + 1;
        if (at < parts.size() && parts[at].starts_with("uid_")) {
            ++at; // cgroup v1: slurm/uid_<uid>/job_<id>
        }
        if (at >= parts.size()) {
            continue;
        }
        if (parts[at].starts_with("job_") && all_digits(parts[at].substr(4))) {
            found.job_id = parts[at].substr(4);
        } else if (is_sluid(parts[at])) {
            found.sluid = parts[at];
        } else {
            continue;
        }
        if (at + 1 < parts.size() && parts[at + 1].starts_with("step_")) {
            found.step = parts[at + 1].substr(5);
        }
        return found;
    }
    return std::nullopt;
}

std::string slurm_job_label(std::string_view path) {
    const std::optional<SlurmCgroup> found = parse_slurm_cgroup_path(path);
    return found ? found->label() : std::string();
}

std::optional<SlurmCgroup> parse_slurm_cgroup(std::string_view content) {
    std::vector<std::string_view> v2;
    std::vector<std::string_view> v1;
    while (!content.empty()) {
        const std::size_t newline = content.find('\n');
        const std::string_view line = content.substr(0, newline);
        content.remove_prefix(newline == std::string_view::npos ? content.size() : newline + 1);
        const std::size_t first = line.find(':');
        const std::size_t second =
            first == std::string_view::npos ? first : line.find(':', first + 1);
        if (second == std::string_view::npos) {
            continue;
        }
        const bool unified = line.substr(0, second + 1) == "0::";
        (unified ? v2 : v1).push_back(line.substr(second + 1));
    }
    v2.insert(v2.end(), v1.begin(), v1.end());
    for (std::string_view path : v2) {
        if (auto found = parse_slurm_cgroup_path(path)) {
            return found;
        }
    }
    return std::nullopt;
}

std::string slurm_job_id_from_environ(std::string_view environ) {
    constexpr std::string_view key = "SLURM_JOB_ID=";
    while (!environ.empty()) {
        const std::size_t end = environ.find('\0');
        const std::string_view entry = environ.substr(0, end);
        environ.remove_prefix(end == std::string_view::npos ? environ.size() : end + 1);
        if (entry.starts_with(key) && all_digits(entry.substr(key.size()))) {
            return std::string(entry.substr(key.size()));
        }
    }
    return {};
}

std::string resolve_slurm_job(const SlurmCgroup& cgroup, std::string_view environ,
                              const std::vector<Allocation>& card_allocations) {
    if (!cgroup.job_id.empty()) {
        return cgroup.job_id;
    }
    if (std::string from_env = slurm_job_id_from_environ(environ); !from_env.empty()) {
        return from_env;
    }
    std::vector<const Allocation*> jobs;
    for (const Allocation& allocation : card_allocations) {
        if (allocation.kind == AllocationKind::slurm_job) {
            jobs.push_back(&allocation);
        }
    }
    if (jobs.size() == 1) {
        return jobs.front()->id;
    }
    return cgroup.sluid;
}

} // namespace gua::alloc
