// SPDX-License-Identifier: Apache-2.0
// The scenario a fake libnvidia-ml.so.1 plays: devices, processes, faults and ABI switches,
// read from the JSON file named by $GUA_FAKE_NVML_SCENARIO (format in README.md).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gua::fake_nvml {

/// A piecewise-constant function of scenario time (seconds): [[t0, v0], [t1, v1], ...].
/// Before the first point it takes the first value; an empty series is `fallback` everywhere.
class Series {
  public:
    Series() = default;
    Series(std::vector<std::pair<double, double>> points, double fallback);

    /// Value at time t.
    double at(double t) const;
    /// Integral over [a, b] (value × seconds).
    double integral(double a, double b) const;
    /// Mean over [a, b]; at(a) when the interval is empty.
    double mean(double a, double b) const;

  private:
    std::vector<std::pair<double, double>> m_points;
    double m_fallback = 0;
};

inline constexpr double k_forever = std::numeric_limits<double>::infinity();

/// A MIG instance of a device.
struct MigInstance {
    std::string uuid;
    std::string name;
    double memory_total_mib = 0;
    unsigned int gpu_instance_id = 0;
    unsigned int compute_instance_id = 0;
    std::map<unsigned int, Series> gpm_metrics; ///< GPM metric id → % series of this instance
};

/// GPM (Hopper and newer) of one device: whether nvmlGpmQueryDeviceSupport says yes, the
/// metrics array size of the header the "driver" was built with, a % series per metric id and
/// the ids whose per-metric return code is NOT_SUPPORTED.
struct Gpm {
    bool supported = false;
    unsigned int metric_max = 333;
    std::map<unsigned int, Series> metrics;
    std::vector<unsigned int> unsupported_metrics;
};

/// One physical GPU.
struct Device {
    std::string uuid;
    std::string name;
    std::string pci_bus_id;
    double memory_total_mib = 81559;
    double memory_reserved_mib = 0;
    Series util, mem_util, power_mw, temperature_c, sm_clock_mhz, clock_event_reasons,
        extra_used_mib;
    /// Health readings: enforced power limit, highest SM clock, and the field values
    /// (nvmlDeviceGetFieldValues) of memory temperature, volatile uncorrected ECC errors,
    /// remapped rows and PCIe replays.
    Series power_limit_mw, max_sm_clock_mhz, memory_temperature_c, ecc_uncorrected,
        remapped_rows_correctable, remapped_rows_uncorrectable, remap_pending, pcie_replays;
    std::vector<unsigned int> unsupported_fields;      ///< field ids answering NOT_SUPPORTED
    unsigned long long supported_event_types = 0xFF9F; ///< what an H200 on R580 answers
    /// PCIe link (current generation and width as series; the maxima), the row remapper's
    /// failure flag (field 145), persistence mode, and NVLink: the links the driver answers for,
    /// those down, and link 0's replay, recovery and CRC (flit) error counters.
    Series pcie_gen, pcie_width, remap_failure, nvlink_replay, nvlink_recovery, nvlink_crc;
    unsigned int pcie_gen_max = 5, pcie_width_max = 16, persistence_mode = 1, nvlink_links = 0;
    std::vector<unsigned int> nvlink_down;
    /// Links that go down at a scenario time: (link, seconds); down from then on.
    std::vector<std::pair<unsigned int, double>> nvlink_down_at;
    Gpm gpm;
    double util_period_s = 1.0 / 6.0;
    std::size_t ring_size = 100;
    bool dry_idle = false;        ///< no ring entries while util is 0 ("util_idle_mode": "dry")
    bool boot_timestamps = false; ///< ring timestamps boot-relative instead of epoch
    double energy_start_mj = 0;
    bool mig = false;
    std::vector<MigInstance> mig_instances;
    bool no_permission = false;
    /// Scenario time from which the driver counts the device (hot-added); before it the device
    /// is not counted and its index does not exist.
    double present_from = -1e300;
    std::vector<std::string> not_supported; ///< function names answering NOT_SUPPORTED
    bool include_last_seen = false;         ///< ring quirk: also return the entry == lastSeen
    bool unsorted = false;                  ///< ring quirk: newest first
    bool zero_timestamp_entry = false;      ///< ring quirk: one extra entry with timestamp 0
    bool dirty_upper_bytes = false;         ///< ring quirk: garbage above uiVal
    unsigned int process_util_size =
        0; ///< size-query answer and smallest buffer taken; 0 = number of pids
    bool process_util_junk = false; ///< unknown pids, util > 100 and zero rows
    unsigned int growth_extra = 0;  ///< processes "appearing" per growing data call
    unsigned int growth_calls = 0;  ///< how many compute-list data calls grow
};

/// What kind of context a process has.
enum class ProcessKind : std::uint8_t { compute, graphics, mps };

/// One process on one device (or one MIG instance of it), alive over [start, end).
struct Process {
    std::size_t device = 0;
    int mig_instance = -1;
    unsigned int pid = 0;
    ProcessKind kind = ProcessKind::compute;
    double start = 0;
    double end = k_forever;
    bool until_exit = false; ///< listed only while the real pid runs (the driver frees on exit)
    Series memory_mib;
    Series sm_util;
};

/// An error returned by `function` (or every function: "*") on a device over [from, to).
struct Fault {
    std::string function;
    int device = -1; ///< -1 = every device
    double from = 0;
    double to = k_forever;
    int error = 0;
};

/// A driver event at a scenario time (nvmlEventSetWait_v2 and/or a kernel log record).
struct EventSpec {
    std::size_t device = 0;
    int mig_instance = -1; ///< attributable to this MIG instance (GI/CI set), -1 = whole GPU
    double at = 0;         ///< scenario seconds
    unsigned long long type = 0x8; ///< event type bit (0x8 = Xid critical error)
    unsigned long long xid = 0;    ///< eventData (0 for types other than Xid)
    bool nvml = true;              ///< delivered by nvmlEventSetWait_v2
    bool kmsg = true;              ///< written to $GUA_FAKE_NVML_KMSG_FILE
    long long pid = -1;            ///< the kernel log line's pid= (-1: none)
    std::string name;              ///< the kernel log line's name= (empty: none)
    std::string message;           ///< the rest of the kernel log line
};

/// A whole scenario.
struct Scenario {
    std::string driver_version;
    double time_scale = 1.0;
    int init_error = 0;
    std::size_t process_info_stride = 0; ///< bytes _v3 writes; 0 = the variant's own
    std::vector<Device> devices;
    std::vector<Process> processes;
    std::vector<Fault> faults;
    std::vector<EventSpec> events; ///< sorted by time
};

/// Parses a scenario file; throws std::exception with a readable message on any problem.
Scenario load_scenario(const std::string& path);

/// Parses scenario JSON text; throws std::exception with a readable message on any problem.
Scenario parse_scenario(std::string_view text);

} // namespace gua::fake_nvml
