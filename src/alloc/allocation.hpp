// SPDX-License-Identifier: Apache-2.0
// What an allocation source says about a card: the allocation records, the device names a source
// uses, one reading of a whole source, and the per-card answer for a span of time.
#pragma once

#include "core/time.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gua::alloc {

/// Who handed the card out.
enum class AllocationKind { slurm_job, pod, reservation };

/// "slurm-job", "pod" or "reservation" (the names used in gua.toml, sidecar files and docs).
std::string_view kind_name(AllocationKind kind);
/// The kind named `name` (as kind_name writes it), or nullopt.
std::optional<AllocationKind> parse_kind(std::string_view name);

/// One allocation of one card (or MIG instance).
struct Allocation {
    AllocationKind kind = AllocationKind::slurm_job;
    std::string id;      ///< Slurm job id, "<namespace>/<pod>", or a reservation's name
    std::string user;    ///< the owner's user name; empty when the source does not say
    std::string account; ///< Slurm account or Kubernetes namespace; empty when not said

    friend bool operator==(const Allocation&, const Allocation&) = default;
};

/// A device as a source names it: by NVML index (optionally with a MIG GPU-instance id), or by
/// uuid ("GPU-…" for a whole card, "MIG-…" for an instance).
struct DeviceRef {
    std::optional<unsigned> index;        ///< NVML index (mapping directory)
    std::optional<unsigned> gpu_instance; ///< MIG GPU-instance id with `index` ("INDEX.GI")
    std::string uuid;                     ///< GPU or MIG uuid (kubelet pod-resources)

    friend bool operator==(const DeviceRef&, const DeviceRef&) = default;
};

/// One reading of a whole source at one instant.
struct Snapshot {
    /// False when the source is configured but could not be read: every card's allocation is
    /// unknown (never "unallocated") until a readable snapshot follows.
    bool readable = true;
    std::string error; ///< why, when !readable
    std::vector<std::pair<DeviceRef, Allocation>> entries;
    /// Devices whose own entry could not be read (e.g. a malformed mapping file): unknown.
    std::vector<std::pair<DeviceRef, std::string>> unknown;

    friend bool operator==(const Snapshot&, const Snapshot&) = default;
};

/// The card the consumer asks about, with every name it has for it. On a MIG card ask once per
/// GPU instance (gpu_instance and mig_uuid set): a whole-card allocation covers every instance,
/// an instance's allocation covers only that instance.
struct CardQuery {
    unsigned index = 0;
    std::string uuid; ///< the card's "GPU-…" uuid; empty when unknown
    std::optional<unsigned> gpu_instance;
    std::string mig_uuid; ///< the instance's "MIG-…" uuid; empty when unknown

    /// True when `device` names this card or (for a MIG query) this instance.
    bool matches(const DeviceRef& device) const;
};

/// What owned a card over a part of a span.
enum class AllocationState {
    unallocated, ///< the source was readable and named no allocation for the card
    allocated,   ///< one or more allocations (shared GPUs may hold several)
    unknown,     ///< configured but unreadable, not yet read, or stalled: flag, never "unallocated"
};

/// "unallocated", "allocated" or "unknown".
std::string_view state_name(AllocationState state);

/// A maximal stretch [begin, end) of one card with one state and one set of allocations.
struct Segment {
    TimeUs begin = 0;
    TimeUs end = 0;
    AllocationState state = AllocationState::unknown;
    std::vector<Allocation> allocations; ///< sorted by (kind, id); empty unless allocated
    std::string reason;                  ///< why, when unknown

    friend bool operator==(const Segment&, const Segment&) = default;
};

} // namespace gua::alloc
