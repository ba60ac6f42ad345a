// SPDX-License-Identifier: Apache-2.0
// The fake driver's state: the loaded scenario, scenario time, device handles, faults, and the
// sample rings derived from the scenario. One process-wide instance behind a mutex (NVML is
// thread-safe); the exported C functions in exports.cpp are thin wrappers over it.
#pragma once

#include "nvml/abi.hpp"
#include "scenario.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gua::fake_nvml {

using nvml::nvmlDevice_t;
using nvml::nvmlReturn_t;

/// What an nvmlDevice_t points to: a physical device, or one of its MIG instances.
struct Handle {
    std::size_t device = 0;
    int mig = -1; ///< MIG instance slot, -1 for the physical device
};

/// One ring entry (timestamp µs in the device's domain, value %).
struct RingEntry {
    std::uint64_t timestamp_us = 0;
    double value = 0;
};

/// One per-process utilization entry.
struct ProcessUtil {
    unsigned int pid = 0;
    std::uint64_t timestamp_us = 0;
    unsigned int sm_util = 0;
};

/// What a GPM sample (nvmlGpmSample_t) of the fake points to: which device (or MIG instance)
/// it sampled and when, in scenario seconds.
struct GpmSample {
    bool taken = false;
    std::size_t device = 0;
    int mig = -1; ///< MIG instance slot, -1 for the whole GPU
    double t = 0;
};

/// An event set: which devices were registered for which types, from which scenario time, and
/// which scenario events it has delivered.
struct EventSet {
    struct Registration {
        std::size_t device = 0;
        unsigned long long mask = 0;
        double since = 0;
    };
    std::vector<Registration> registrations;
    std::vector<bool> delivered; ///< per scenario event
};

/// The fake driver. All methods expect the caller to hold lock().
class Driver {
  public:
    /// The process-wide instance.
    static Driver& instance();
    std::mutex& lock() { return m_mutex; }

    /// nvmlInit: ref-counted; the first call loads the scenario and starts scenario time.
    nvmlReturn_t init();
    /// nvmlShutdown: the last call forgets the scenario and invalidates handles.
    nvmlReturn_t shutdown();
    bool initialized() const { return m_refcount > 0; }
    const Scenario& scenario() const { return m_scenario; }

    /// Scenario time in seconds: the clock file's number when $GUA_FAKE_NVML_CLOCK_FILE is set,
    /// else seconds since init × time_scale.
    double now() const;
    /// The handle object behind `h`, or nullptr when it is not one of ours.
    const Handle* resolve(nvmlDevice_t h) const;
    /// The handle of device `index` (or of its MIG instance `mig`).
    nvmlDevice_t handle_of(std::size_t index, int mig = -1) const;
    /// The error an active fault (or the not_supported list) injects into `function` on
    /// `device` now, if any. Versioned names also match their unversioned base name.
    std::optional<nvmlReturn_t> fault(std::string_view function, std::size_t device) const;

    /// GPU-utilization ring entries of `device` newer than `last_seen` (quirks applied).
    std::vector<RingEntry> ring(std::size_t device, std::uint64_t last_seen) const;
    /// The newest complete period's utilization (what nvmlDeviceGetUtilizationRates says).
    unsigned int snapshot_util(std::size_t device) const;
    /// Per-process entries newer than `last_seen`: one per pid with non-zero use since then.
    std::vector<ProcessUtil> process_util(std::size_t device, std::uint64_t last_seen) const;
    /// Processes of `kind` alive now on the handle (all instances for a physical device), in
    /// scenario order; the list is valid until the next call.
    const std::vector<const Process*>& processes(const Handle& h, ProcessKind kind);
    /// Memory used now by processes on the handle plus extra_used_mib, in MiB.
    double used_mib(const Handle& h) const;
    /// Counts one compute-list data call; returns the extra entries to claim (list growth).
    unsigned int take_growth(std::size_t device);

    /// nvmlGpmSampleAlloc / Free: a new sample, and forgetting one (false when not ours).
    nvml::nvmlGpmSample_t gpm_alloc();
    bool gpm_free(nvml::nvmlGpmSample_t sample);
    /// The sample behind `sample`, or nullptr when it is not one of ours.
    GpmSample* gpm_sample(nvml::nvmlGpmSample_t sample);

    /// nvmlEventSetCreate / Free, and the set behind a handle (nullptr when not ours).
    nvml::nvmlEventSet_t event_set_create();
    bool event_set_free(nvml::nvmlEventSet_t set);
    EventSet* event_set(nvml::nvmlEventSet_t set);
    /// The next due event of `set` (registered type, at or after its registration), marked
    /// delivered; NVML_ERROR_GPU_IS_LOST when none is due and a registered device is lost to
    /// an active fault 15; nullopt when nothing is due.
    std::optional<nvmlReturn_t> next_event(EventSet& set, nvml::nvmlEventData_t& out);
    /// Appends the kernel-log records of the events due by now to $GUA_FAKE_NVML_KMSG_FILE
    /// (each once, with the once-per-GPU "GPU at PCI" line before its first Xid).
    void emit_kmsg();

  private:
    double sample_time(std::size_t k, const Device& d) const;
    std::uint64_t timestamp(const Device& d, double t) const;

    std::mutex m_mutex;
    int m_refcount = 0;
    Scenario m_scenario;
    std::string m_clock_file;
    std::int64_t m_mono_start_us = 0;
    std::int64_t m_epoch_start_us = 0;
    std::int64_t m_boot_start_us = 0;
    /// Whether `p` is on `h` and alive at scenario time `t`.
    bool alive_on(const Process& p, const Handle& h, double t) const;

    std::vector<std::unique_ptr<Handle>> m_handles;
    std::vector<std::unique_ptr<GpmSample>> m_gpm_samples;
    std::vector<unsigned int> m_growth_done;
    std::vector<std::vector<const Process*>> m_by_device; ///< scenario processes per device
    std::vector<const Process*> m_listed;                 ///< what processes() returned last
    std::vector<std::unique_ptr<EventSet>> m_event_sets;
    std::string m_kmsg_file;            ///< $GUA_FAKE_NVML_KMSG_FILE; empty: none
    std::size_t m_kmsg_next = 0;        ///< first scenario event not yet considered for kmsg
    std::uint64_t m_kmsg_seq = 0;       ///< last sequence number written
    std::vector<bool> m_kmsg_uuid_said; ///< per device: its "GPU at PCI" line written
};

} // namespace gua::fake_nvml
