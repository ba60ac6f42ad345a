// SPDX-License-Identifier: Apache-2.0
// Slurm cgroup layout detection for `gua doctor` (docs/allocations.md "Slurm cgroup layouts").
#include "alloc/slurm_layout.hpp"

#include "alloc/slurm_cgroup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace gua::alloc {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t k_max_entries = 256;

/// The names of the sub-directories of `dir` (at most k_max_entries); none when unreadable.
std::vector<std::string> subdirs(const fs::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end && out.size() < k_max_entries;
         it.increment(ec)) {
        if (it->is_directory(ec) && !it->is_symlink(ec)) {
            out.push_back(it->path().filename().string());
        }
    }
    return out;
}

void note(SlurmLayout& l, const std::string& layout) {
    if (std::find(l.layouts.begin(), l.layouts.end(), layout) == l.layouts.end()) {
        l.layouts.push_back(layout);
    }
}

/// Reads the job directories under `base` (a cgroup path as the kernel shows it) in `dir`.
void read_jobs(SlurmLayout& l, const fs::path& dir, const std::string& base) {
    for (const std::string& name : subdirs(dir)) {
        const auto c = parse_slurm_cgroup_path(base + "/" + name);
        if (!c || (c->job_id.empty() && c->sluid.empty())) {
            continue;
        }
        ++l.jobs;
        if (c->job_id.empty()) {
            ++l.sluid_jobs;
            note(l, "SLUID");
        } else {
            note(l, "job_<id>");
        }
        if (!c->node.empty()) {
            note(l, "multiple-slurmd");
        }
    }
}

void read_v2(SlurmLayout& l, const fs::path& cgroup) {
    for (const std::string& scope : subdirs(cgroup / "system.slice")) {
        if (scope == "slurmstepd.scope" || scope.ends_with("_slurmstepd.scope")) {
            l.slurm = true;
            if (scope != "slurmstepd.scope") {
                note(l, "multiple-slurmd");
            }
            read_jobs(l, cgroup / "system.slice" / scope, "/system.slice/" + scope);
        }
    }
}

void read_v1(SlurmLayout& l, const fs::path& cgroup) {
    for (const char* controller : {"freezer", "memory", "cpuset", "devices"}) {
        for (const std::string& top : subdirs(cgroup / controller)) {
            if (top != "slurm" && !top.starts_with("slurm_")) {
                continue;
            }
            l.slurm = true;
            if (top != "slurm") {
                note(l, "multiple-slurmd");
            }
            for (const std::string& uid : subdirs(cgroup / controller / top)) {
                if (uid.starts_with("uid_")) {
                    read_jobs(l, cgroup / controller / top / uid, "/" + top + "/" + uid);
                }
            }
        }
        if (l.slurm) {
            return; // one controller's tree shows every job
        }
    }
}

} // namespace

SlurmLayout detect_slurm_layout(const std::string& root) {
    SlurmLayout l;
    const fs::path cgroup = fs::path(root.empty() ? "/" : root) / "sys/fs/cgroup";
    std::error_code ec;
    if (fs::exists(cgroup / "cgroup.controllers", ec)) {
        l.cgroup_version = 2;
        read_v2(l, cgroup);
    } else if (fs::is_directory(cgroup / "memory", ec) ||
               fs::is_directory(cgroup / "freezer", ec)) {
        l.cgroup_version = 1;
        read_v1(l, cgroup);
    }
    return l;
}

std::string describe_slurm_layout(const SlurmLayout& l, bool mapping_dir) {
    const std::string version = l.cgroup_version == 0 ? "no cgroup file system found"
                                                      : fmt::format("cgroup v{}", l.cgroup_version);
    if (!l.slurm) {
        return version + ", no Slurm job cgroups (slurmd not running here, or not with cgroups)";
    }
    if (l.jobs == 0) {
        return fmt::format(
            "{}, Slurm's step daemon tree{}, no job running: jobs are named when "
            "they run",
            version, l.layouts.empty() ? "" : fmt::format(" ({})", fmt::join(l.layouts, ", ")));
    }
    std::string named = "every job is named by its id";
    if (l.sluid_jobs > 0) {
        named = mapping_dir ? fmt::format("{} of {} jobs are named by SLUID; their ids come from "
                                          "SLURM_JOB_ID or the mapping directory",
                                          l.sluid_jobs, l.jobs)
                            : fmt::format("{} of {} jobs are named by SLUID only: without the "
                                          "mapping directory, reports show SLUIDs where "
                                          "SLURM_JOB_ID cannot be read",
                                          l.sluid_jobs, l.jobs);
    }
    return fmt::format("{}, layout {}, {} job{}: {}", version, fmt::join(l.layouts, " + "), l.jobs,
                       l.jobs == 1 ? "" : "s", named);
}

bool slurm_layout_warns(const SlurmLayout& l, bool mapping_dir) {
    return l.sluid_jobs > 0 && !mapping_dir;
}

} // namespace gua::alloc
