// DeviceSource: the one seam between gua and GPU hardware (NVML, or a synthetic workload).
#pragma once

#include "core/time.hpp"
#include "telemetry/model.hpp"

#include <string>
#include <vector>

namespace gua::telemetry {

/// A provider of card readings. Not thread-safe; the sampler calls it from one thread.
class DeviceSource {
  public:
    virtual ~DeviceSource() = default;
    /// Driver version text, e.g. "560.35.05"; empty when unknown.
    virtual std::string driver_version() = 0;
    /// The cards visible now (physical GPUs and MIG instances). May change between calls.
    virtual std::vector<DeviceInfo> devices() = 0;
    /// Reads every card once. `now` is the wall time of the poll. Readings that fail are nullopt
    /// and counted in read_errors; a lost card is reported with lost=true. Never throws for a
    /// per-card failure.
    virtual std::vector<DevicePoll> poll(TimeUs now) = 0;
    /// Like poll(), into `out` (one entry per card, overwritten); sources that can reuse its
    /// storage from poll to poll do so.
    virtual void poll_into(TimeUs now, std::vector<DevicePoll>& out) { out = poll(now); }
};

} // namespace gua::telemetry
