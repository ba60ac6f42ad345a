// SPDX-License-Identifier: Apache-2.0
// The telemetry domain model: what a DeviceSource reports about cards and their processes.
#pragma once

#include "core/time.hpp"
#include "telemetry/card_fields.hpp"
#include "telemetry/identity.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gua::telemetry {

/// Static facts about one card (a physical GPU or a MIG instance).
struct DeviceInfo {
    std::string uuid; ///< "GPU-…" or "MIG-…"; the stable key
    int index = 0;    ///< driver index (not stable across reboots)
    std::string name; ///< model, e.g. "NVIDIA H100 80GB HBM3"
    std::optional<std::int64_t> memory_total_mib;
    std::string pci_bus_id;  ///< e.g. "00000000:3B:00.0"; empty when unknown
    std::string parent_uuid; ///< for MIG instances: the physical GPU's uuid
    /// A card first opened at an index the daemon started without: the stand-in recorded there
    /// meanwhile (stand_in_uuid()), whose row and unmeasured time the card takes over.
    std::string replaces = {};
};

/// The uuid of the stand-in for a card the driver counts at `index` but that did not open when
/// the daemon started and was never recorded: "unopened-<index>". Its time is unmeasured until
/// the card opens and takes the stand-in's place (DeviceInfo::replaces).
std::string stand_in_uuid(int index);
/// True for uuids stand_in_uuid() makes.
bool is_stand_in(const std::string& uuid);
/// The model name a stand-in is recorded with.
inline constexpr const char* k_stand_in_name = "(NVML could not open it)";

/// What kind of context a process has on a card.
enum class ProcessType : std::uint8_t { compute = 0, graphics = 1, mps = 2 };

/// Returns "compute", "graphics" or "mps".
const char* to_string(ProcessType type);

/// One process on one card at one poll.
struct ProcessReading {
    std::uint32_t pid = 0;
    ProcessType type = ProcessType::compute;
    std::optional<std::int64_t> mem_used_mib; ///< nullopt: the driver did not say
    std::optional<double> sm_util_pct;        ///< mean SM % over the poll span; nullopt: unknown
    /// Set by sources that already know the owner (synthetic workloads); the sampler then skips
    /// /proc resolution. Real sources leave it empty.
    std::optional<Identity> identity;
};

/// How the utilization of a poll was measured.
enum class UtilSource : std::uint8_t {
    none = 0,     ///< not measured (MIG, unsupported, error): "n/a", never 0 %
    snapshot = 1, ///< one instantaneous reading (nvmlDeviceGetUtilizationRates)
    samples = 2,  ///< the driver's sample buffer integrated over the poll span
    partial = 3,  ///< the driver's sample buffer, with samples lost (see unmeasured_us)
};

/// One utilization sub-sample with its relative weight (time it represents, in microseconds).
struct UtilSample {
    double pct = 0;
    DurationUs weight_us = 0;
};

/// Everything read from one card at one poll. The util samples cover the span since the previous
/// poll of that card; their weights are relative and are rescaled to the real span by the sampler.
struct DevicePoll {
    std::string uuid;
    bool lost = false; ///< the card fell off the bus (GPU_IS_LOST); all readings are empty
    UtilSource util_source = UtilSource::none;
    std::vector<UtilSample> util;
    /// Part of the poll span whose utilization is unknown (ring samples lost, a failed read);
    /// `util` covers the rest of the span.
    DurationUs unmeasured_us = 0;
    /// A process-list read failed: `processes` may be incomplete, the holders are unknown.
    bool processes_unknown = false;
    /// The per-process utilization read failed (not "not supported"): who was active during the
    /// poll is unknown, so its active time is attributed to no one (flagged).
    bool process_util_unknown = false;
    /// The card's readings (card_fields.def): counter fields hold the driver's running counter
    /// (energy since the driver loaded), fields the fold derives stay empty.
    CardReadings readings;
    std::vector<ProcessReading> processes;
    int read_errors = 0; ///< readings that failed with an unexpected error this poll
};

} // namespace gua::telemetry
