// SPDX-License-Identifier: Apache-2.0
// GPM (GPU Performance Monitoring, Hopper and newer): a ring of two driver samples per card, and
// the metrics over the time between the newest two (SM active and occupancy, tensor, DRAM and
// floating-point pipe activity), read into a poll's card readings.
#pragma once

#include "core/time.hpp"
#include "nvml/abi.hpp"
#include "nvml/library.hpp"
#include "telemetry/card_fields.hpp"

#include <array>
#include <memory>
#include <optional>

namespace gua::nvml {

/// Where a card's GPM samples come from: a physical GPU, or a MIG instance of `parent` (sampled
/// with nvmlGpmMigSampleGet by its GPU instance id).
struct GpmTarget {
    nvmlDevice_t device = nullptr; ///< the physical GPU (the parent for a MIG instance)
    std::optional<unsigned int> gpu_instance_id;
};

/// Shortest time between the two samples of one metrics call (the driver's refresh, nvml-notes
/// §9); a poll sooner than this after the previous sample takes none.
inline constexpr DurationUs k_gpm_min_interval_us = 100 * k_us_per_ms;

/// One card's GPM state: whether the card supports GPM, and the two samples (owned; freed by
/// the destructor through the library, which must outlive the ring).
class GpmRing {
  public:
    explicit GpmRing(const Library& library) : m_library(&library) {}
    ~GpmRing();
    GpmRing(const GpmRing&) = delete;
    GpmRing& operator=(const GpmRing&) = delete;

    /// Takes a sample of `target` at wall time `now` and, when the previous sample is at least
    /// k_gpm_min_interval_us older, sets the GPM fields of `readings` to the metrics between
    /// them (a metric whose own return code is not SUCCESS stays nullopt). Unsupported devices,
    /// a driver without GPM and failed calls leave the fields nullopt; failures other than "not
    /// supported" are added to `errors` and restart the ring; NO_PERMISSION turns GPM off for the
    /// card. GPU_IS_LOST sets `lost`.
    void read(GpmTarget target, TimeUs now, telemetry::CardReadings& readings, int& errors,
              bool& lost);
    /// Forgets the samples taken (the next read starts a new pair), e.g. after a lost card.
    void restart() { m_newest = -1; }

  private:
    enum class Support : std::uint8_t { unknown, yes, no };
    bool ready(GpmTarget target);

    const Library* m_library;
    Support m_support = Support::unknown;
    std::array<nvmlGpmSample_t, 2> m_samples{};
    int m_newest = -1; ///< slot of the newest sample taken, -1 when none
    TimeUs m_newest_at = 0;
    std::unique_ptr<nvmlGpmMetricsGet_t> m_request; ///< 13 KB, allocated once
};

} // namespace gua::nvml
