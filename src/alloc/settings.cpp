// SPDX-License-Identifier: Apache-2.0
// Validation of allocation source paths, and the factory of the configured sources.
#include "alloc/settings.hpp"

#include "alloc/kubelet_source.hpp"
#include "alloc/mapping_source.hpp"

namespace gua::alloc {
namespace {

// How long one pod-resources List may take before the reading counts as failed.
constexpr DurationUs k_kubelet_timeout_us = 2 * k_us_per_second;

} // namespace

Result<void> validate_source_path(std::string_view what, std::string_view path) {
    if (path.empty() || path.front() != '/') {
        return Error{std::string(what) + ": expected an absolute path, got \"" + std::string(path) +
                     "\""};
    }
    if (path.find_first_of(std::string_view("\0\n", 2)) != std::string_view::npos) {
        return Error{std::string(what) + ": the path holds a NUL or newline character"};
    }
    const std::string padded = std::string(path) + "/";
    if (padded.find("/./") != std::string::npos || padded.find("/../") != std::string::npos) {
        return Error{std::string(what) + ": the path \"" + std::string(path) +
                     "\" holds a \".\" or \"..\" component"};
    }
    return {};
}

std::unique_ptr<AllocationSource> make_allocation_source(const Settings& settings) {
    std::vector<std::unique_ptr<AllocationSource>> sources;
    for (const std::string& dir : settings.mapping_dirs) {
        sources.push_back(std::make_unique<MappingDirSource>(dir));
    }
    if (!settings.kubelet_socket.empty()) {
        sources.push_back(std::make_unique<KubeletSource>(
            "kubelet pod-resources " + settings.kubelet_socket,
            load_pod_resources_client(kubelet_module_path(), settings.kubelet_socket,
                                      k_kubelet_timeout_us)));
    }
    if (sources.empty()) {
        return nullptr;
    }
    return make_composite_source(std::move(sources));
}

} // namespace gua::alloc
