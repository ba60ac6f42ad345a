// SPDX-License-Identifier: Apache-2.0
// Reads one card once: utilization (sample ring, else snapshot), memory, processes, per-process
// utilization, power, energy, temperature, clocks. MIG instances: memory and processes only.
#pragma once

#include "core/time.hpp"
#include "nvml/card.hpp"
#include "nvml/library.hpp"
#include "telemetry/model.hpp"

#include <string>

namespace gua::nvml {

/// Polls `card` at wall time `now` into `poll` (overwritten; its storage reused). NOT_SUPPORTED
/// readings are nullopt; other failures are nullopt and counted in read_errors; GPU_IS_LOST marks
/// the card lost and leaves an empty poll with lost=true. Advances the card's cursors and
/// last_poll.
void read_card(const Library& library, Card& card, TimeUs now, SourceState& state,
               telemetry::DevicePoll& poll);

/// Resets `poll` to an empty, not lost reading of `card` (keeping its storage).
void clear_poll(const Card& card, telemetry::DevicePoll& poll);

/// The UUID of a handle ("GPU-…"/"MIG-…"), or the failing return code.
nvmlReturn_t read_uuid(const Library& library, nvmlDevice_t handle, std::string& uuid);

/// Converts bytes to MiB, rounding to nearest.
std::int64_t bytes_to_mib(std::uint64_t bytes);

} // namespace gua::nvml
