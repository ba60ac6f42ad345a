// SPDX-License-Identifier: Apache-2.0
// DeviceSource: the one seam between gua and GPU hardware (NVML, or a synthetic workload).
#pragma once

#include "core/time.hpp"
#include "telemetry/model.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gua::telemetry {

/// Poll span of a source that has no sample buffer to overrun: the daemon's longest.
inline constexpr DurationUs k_default_max_poll_span_us = 5 * k_us_per_second;

/// A card the driver counts but could not open (its index, and what the driver answered).
struct UnopenedDevice {
    int index = 0;
    std::string error; ///< e.g. "nvmlDeviceGetHandleByIndex: GPU is lost (error 15)"
    friend bool operator==(const UnopenedDevice&, const UnopenedDevice&) = default;
};

/// A provider of card readings. Not thread-safe; the sampler calls it from one thread.
class DeviceSource {
  public:
    virtual ~DeviceSource() = default;
    /// Driver version text, e.g. "560.35.05"; empty when unknown.
    virtual std::string driver_version() = 0;
    /// The cards known now (physical GPUs and MIG instances, lost ones included). May change
    /// between calls: sources re-enumerate as cards come and go.
    virtual std::vector<DeviceInfo> devices() = 0;
    /// Cards the driver counts but could not open at the last enumeration; empty by default.
    virtual std::vector<UnopenedDevice> unopened_devices() { return {}; }
    /// Cards recorded before (e.g. in the database), most recently registered last. A source
    /// that counts a card at an index it cannot open reports the last of these known at that
    /// index as lost until the index opens, so that the card's absent time is unmeasured rather
    /// than missing. Ignored by default.
    virtual void expect_devices(const std::vector<DeviceInfo>& known) { static_cast<void>(known); }
    /// Reads every card once. `now` is the wall time of the poll. Readings that fail are nullopt
    /// and counted in read_errors; a lost card is reported with lost=true. Never throws for a
    /// per-card failure.
    virtual std::vector<DevicePoll> poll(TimeUs now) = 0;
    /// Like poll(), into `out` (one entry per card, overwritten); sources that can reuse its
    /// storage from poll to poll do so.
    virtual void poll_into(TimeUs now, std::vector<DevicePoll>& out) { out = poll(now); }
    /// The longest span between two polls that loses no driver samples (µs, > 0); the sampler
    /// polls at least this often. It may change as the source learns its sample buffers.
    virtual DurationUs max_poll_span_us() const { return k_default_max_poll_span_us; }
    /// One line for an administrator when utilization is measured less well than from the
    /// driver's sample buffers (e.g. once-per-poll snapshots); empty otherwise.
    virtual std::string measurement_note() { return {}; }
    /// The MIG GPU-instance id of the instance `uuid` (as devices() lists it), which allocation
    /// sources use to name instances ("INDEX.GI"); nullopt for a whole card or when unknown.
    virtual std::optional<unsigned> gpu_instance_of(const std::string& uuid) const {
        static_cast<void>(uuid);
        return std::nullopt;
    }
    /// Where the source reports driver trouble worth a log line (lost samples, junk replies);
    /// sources without such trouble ignore it.
    virtual void set_notice_sink(std::function<void(const std::string&)> sink) {
        static_cast<void>(sink);
    }
};

} // namespace gua::telemetry
