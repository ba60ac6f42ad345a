// SPDX-License-Identifier: Apache-2.0
// Names of allocation kinds and states, and how a card query matches a source's device names.
#include "alloc/allocation.hpp"

#include <array>
#include <utility>

namespace gua::alloc {
namespace {

constexpr std::array<std::pair<AllocationKind, std::string_view>, 3> k_kind_names = {{
    {AllocationKind::slurm_job, "slurm-job"},
    {AllocationKind::pod, "pod"},
    {AllocationKind::reservation, "reservation"},
}};

} // namespace

std::string_view kind_name(AllocationKind kind) {
    for (const auto& [k, name] : k_kind_names) {
        if (k == kind) {
            return name;
        }
    }
    return "unknown";
}

std::optional<AllocationKind> parse_kind(std::string_view name) {
    for (const auto& [k, text] : k_kind_names) {
        if (text == name) {
            return k;
        }
    }
    return std::nullopt;
}

std::string_view state_name(AllocationState state) {
    switch (state) {
    case AllocationState::unallocated:
        return "unallocated";
    case AllocationState::allocated:
        return "allocated";
    case AllocationState::unknown:
        break;
    }
    return "unknown";
}

bool CardQuery::matches(const DeviceRef& device) const {
    if (!device.uuid.empty()) {
        // A whole card's uuid covers all its instances; a MIG uuid only its own instance.
        return (!uuid.empty() && device.uuid == uuid) ||
               (!mig_uuid.empty() && device.uuid == mig_uuid);
    }
    if (!device.index || *device.index != index) {
        return false;
    }
    return !device.gpu_instance || device.gpu_instance == gpu_instance;
}

} // namespace gua::alloc
