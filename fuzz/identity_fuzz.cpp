// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the identity parsers of files others write — Docker's config.v2.json name,
// Podman's containers.json, /proc/<pid>/cgroup (paths users name), /proc/<pid>/status uids and the
// kubelet's log directory names — with the properties their results promise.
#include "identity/cgroup.hpp"
#include "identity/pod_logs.hpp"
#include "identity/proc_stat.hpp"
#include "identity/runtime_names.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <unordered_map>

namespace {

bool lower_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

void check_cgroup(const gua::identity::CgroupFacts& f) {
    // A container id is 64 lowercase hex digits; a pod uid hex, '-' only.
    if (!f.container_id.empty() &&
        (f.container_id.size() != 64 ||
         !std::all_of(f.container_id.begin(), f.container_id.end(), lower_hex))) {
        std::abort();
    }
    if (!std::all_of(f.pod_uid.begin(), f.pod_uid.end(),
                     [](char c) { return lower_hex(c) || c == '-'; })) {
        std::abort();
    }
    // A Slurm job is its id's digits, or (Slurm 26.05, job id unknown) its SLUID: "s" and 8–24
    // upper-case base32 characters.
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    const bool sluid = f.slurm_job.size() >= 9 && f.slurm_job.size() <= 25 &&
                       f.slurm_job.front() == 's' &&
                       std::all_of(f.slurm_job.begin() + 1, f.slurm_job.end(),
                                   [&](char c) { return digit(c) || (c >= 'A' && c <= 'Z'); });
    if (!sluid && !std::all_of(f.slurm_job.begin(), f.slurm_job.end(), digit)) {
        std::abort();
    }
    if (f.user_claimed && f.container_id.empty()) {
        std::abort(); // only a container id is ever a claim
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 6) {
    case 0:
        (void)gua::identity::docker_name_of(text);
        break;
    case 1: {
        std::unordered_map<std::string, std::string> names;
        if (!gua::identity::podman_names_of(text, names) && !names.empty()) {
            std::abort(); // a rejected text names nothing
        }
        break;
    }
    case 2: {
        const gua::identity::CgroupFacts f = gua::identity::parse_cgroup_path(text);
        check_cgroup(f);
        // Below user.slice nothing but the user's own claim is read.
        if (text.starts_with("/user.slice/") && (!f.pod_uid.empty() || !f.slurm_job.empty() ||
                                                 (!f.container_id.empty() && !f.user_claimed))) {
            std::abort();
        }
        break;
    }
    case 3:
        check_cgroup(gua::identity::parse_cgroup(text));
        break;
    case 4:
        (void)gua::identity::parse_status_uids(text);
        (void)gua::identity::parse_proc_stat(text);
        break;
    default:
        if (const auto pod = gua::identity::parse_pod_dir_name(text)) {
            if (pod->pod_namespace.empty() || pod->pod_name.empty() || pod->pod_uid.empty()) {
                std::abort();
            }
        }
        if (const auto log = gua::identity::parse_container_log_name(text)) {
            if (log->container_id.size() != 64) {
                std::abort();
            }
        }
        break;
    }
    return 0;
}
