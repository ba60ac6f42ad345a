// SPDX-License-Identifier: Apache-2.0
// The fake driver's state and the sample rings it derives from the scenario's series.
#include "driver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <fstream>
#include <string>

namespace gua::fake_nvml {
namespace {

std::int64_t clock_us(clockid_t id) {
    timespec ts{};
    clock_gettime(id, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

std::string_view base_name(std::string_view function) {
    for (const char* suffix : {"_v2", "_v3"}) {
        if (function.size() > 3 && function.ends_with(suffix)) {
            return function.substr(0, function.size() - 3);
        }
    }
    return function;
}

bool name_matches(const std::string& pattern, std::string_view function) {
    return pattern == "*" || pattern == function || pattern == base_name(function);
}

/// False once the real pid of an `until_exit` process `p` has exited (gone, or a zombie not yet
/// reaped).
bool running(const Process& p) {
    std::ifstream in("/proc/" + std::to_string(p.pid) + "/stat");
    std::string stat;
    std::getline(in, stat);
    const std::size_t close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z' &&
           stat[close + 2] != 'X';
}

} // namespace

Driver& Driver::instance() {
    static Driver driver;
    return driver;
}

nvmlReturn_t Driver::init() {
    if (m_refcount > 0) {
        ++m_refcount;
        return nvml::NVML_SUCCESS;
    }
    const char* path = std::getenv("GUA_FAKE_NVML_SCENARIO");
    if (path == nullptr) {
        std::fprintf(stderr, "fake nvml: GUA_FAKE_NVML_SCENARIO is not set\n");
        return nvml::NVML_ERROR_DRIVER_NOT_LOADED;
    }
    try {
        m_scenario = load_scenario(path);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fake nvml: %s: %s\n", path, e.what());
        return nvml::NVML_ERROR_UNKNOWN;
    }
    if (m_scenario.init_error != 0) {
        return static_cast<nvmlReturn_t>(m_scenario.init_error);
    }
    const char* clock_file = std::getenv("GUA_FAKE_NVML_CLOCK_FILE");
    m_clock_file = clock_file != nullptr ? clock_file : "";
    m_mono_start_us = clock_us(CLOCK_MONOTONIC);
    m_epoch_start_us = clock_us(CLOCK_REALTIME);
    m_boot_start_us = clock_us(CLOCK_BOOTTIME);
    if (const char* init_file = std::getenv("GUA_FAKE_NVML_INIT_FILE"); init_file != nullptr) {
        // Where scenario time 0 lies on the wall clock: tests place the scenario's events
        // against the recording with it, whatever the process took to start.
        std::ofstream(init_file, std::ios::trunc) << m_epoch_start_us << '\n';
    }
    m_handles.clear();
    for (std::size_t i = 0; i < m_scenario.devices.size(); ++i) {
        m_handles.push_back(std::make_unique<Handle>(Handle{i, -1}));
        for (std::size_t m = 0; m < m_scenario.devices[i].mig_instances.size(); ++m) {
            m_handles.push_back(std::make_unique<Handle>(Handle{i, static_cast<int>(m)}));
        }
    }
    m_growth_done.assign(m_scenario.devices.size(), 0);
    const char* kmsg_file = std::getenv("GUA_FAKE_NVML_KMSG_FILE");
    m_kmsg_file = kmsg_file != nullptr ? kmsg_file : "";
    m_kmsg_next = 0;
    m_kmsg_uuid_said.assign(m_scenario.devices.size(), false);
    m_kmsg_seq = 0;
    if (!m_kmsg_file.empty()) { // sequence numbers continue those already in the file
        std::ifstream in(m_kmsg_file);
        for (std::string line; std::getline(in, line);) {
            ++m_kmsg_seq;
        }
    }
    m_by_device.assign(m_scenario.devices.size(), {});
    for (const Process& p : m_scenario.processes) {
        m_by_device[p.device].push_back(&p);
    }
    m_refcount = 1;
    return nvml::NVML_SUCCESS;
}

nvmlReturn_t Driver::shutdown() {
    if (m_refcount == 0) {
        return nvml::NVML_ERROR_UNINITIALIZED;
    }
    if (--m_refcount == 0) {
        m_handles.clear();
        m_gpm_samples.clear();
        m_event_sets.clear();
        m_by_device.clear();
        m_listed.clear();
        m_scenario = Scenario{};
    }
    return nvml::NVML_SUCCESS;
}

double Driver::now() const {
    if (!m_clock_file.empty()) {
        std::ifstream in(m_clock_file);
        double t = 0;
        return in >> t ? t : 0.0;
    }
    const double elapsed_s = static_cast<double>(clock_us(CLOCK_MONOTONIC) - m_mono_start_us) / 1e6;
    return elapsed_s * m_scenario.time_scale;
}

const Handle* Driver::resolve(nvmlDevice_t h) const {
    for (const auto& handle : m_handles) {
        if (reinterpret_cast<nvmlDevice_t>(handle.get()) == h) {
            return handle.get();
        }
    }
    return nullptr;
}

nvmlDevice_t Driver::handle_of(std::size_t index, int mig) const {
    for (const auto& handle : m_handles) {
        if (handle->device == index && handle->mig == mig) {
            return reinterpret_cast<nvmlDevice_t>(handle.get());
        }
    }
    return nullptr;
}

std::optional<nvmlReturn_t> Driver::fault(std::string_view function, std::size_t device) const {
    if (m_scenario.devices.at(device).not_supported.empty() && m_scenario.faults.empty()) {
        return std::nullopt;
    }
    for (const std::string& name : m_scenario.devices.at(device).not_supported) {
        if (name_matches(name, function)) {
            return nvml::NVML_ERROR_NOT_SUPPORTED;
        }
    }
    const double t = now();
    for (const Fault& f : m_scenario.faults) {
        const bool on_device = f.device < 0 || static_cast<std::size_t>(f.device) == device;
        if (on_device && t >= f.from && t < f.to && name_matches(f.function, function)) {
            return static_cast<nvmlReturn_t>(f.error);
        }
    }
    return std::nullopt;
}

double Driver::sample_time(std::size_t k, const Device& d) const {
    return static_cast<double>(k) * d.util_period_s;
}

std::uint64_t Driver::timestamp(const Device& d, double t) const {
    const std::int64_t base = d.boot_timestamps ? m_boot_start_us : m_epoch_start_us;
    return static_cast<std::uint64_t>(base + std::llround(t * 1e6));
}

std::vector<RingEntry> Driver::ring(std::size_t device, std::uint64_t last_seen) const {
    const Device& d = m_scenario.devices.at(device);
    const auto newest = static_cast<std::size_t>(std::floor(now() / d.util_period_s + 1e-9));
    std::vector<RingEntry> out;
    std::size_t kept = 0;
    for (std::size_t k = newest; k >= 1 && kept < d.ring_size; --k) {
        const double value = d.util.mean(sample_time(k - 1, d), sample_time(k, d));
        if (d.dry_idle && value == 0) {
            continue;
        }
        ++kept;
        const std::uint64_t ts = timestamp(d, sample_time(k, d));
        if (ts < last_seen || (ts == last_seen && !d.include_last_seen)) {
            break; // older entries (lower k) were all seen too
        }
        out.push_back({ts, std::round(value)});
    }
    if (!d.unsorted) {
        std::reverse(out.begin(), out.end());
    }
    if (d.zero_timestamp_entry && !out.empty()) {
        out.push_back({0, 0});
    }
    return out;
}

unsigned int Driver::snapshot_util(std::size_t device) const {
    const Device& d = m_scenario.devices.at(device);
    const auto newest = static_cast<std::size_t>(std::floor(now() / d.util_period_s + 1e-9));
    if (newest == 0) {
        return static_cast<unsigned int>(std::lround(d.util.at(0)));
    }
    return static_cast<unsigned int>(
        std::lround(d.util.mean(sample_time(newest - 1, d), sample_time(newest, d))));
}

std::vector<ProcessUtil> Driver::process_util(std::size_t device, std::uint64_t last_seen) const {
    const Device& d = m_scenario.devices.at(device);
    const auto newest = static_cast<std::size_t>(std::floor(now() / d.util_period_s + 1e-9));
    std::size_t oldest = newest >= d.ring_size ? newest - d.ring_size + 1 : 1;
    // Timestamps grow with k: skip the periods the caller has already seen (binary search), once
    // for all processes.
    for (std::size_t hi = newest + 1; oldest < hi;) {
        const std::size_t mid = oldest + (hi - oldest) / 2;
        if (timestamp(d, sample_time(mid, d)) <= last_seen) {
            oldest = mid + 1;
        } else {
            hi = mid;
        }
    }
    std::vector<ProcessUtil> out;
    for (const Process* process : m_by_device.at(device)) {
        const Process& p = *process;
        if (std::any_of(out.begin(), out.end(),
                        [&](const ProcessUtil& u) { return u.pid == p.pid; })) {
            continue;
        }
        double sum = 0;
        double peak = 0;
        int periods = 0;
        std::uint64_t newest_ts = 0;
        for (std::size_t k = oldest; k <= newest; ++k) {
            const double from = std::max(sample_time(k - 1, d), p.start);
            const double to = std::min(sample_time(k, d), p.end);
            if (to <= from) {
                continue;
            }
            const std::uint64_t ts = timestamp(d, sample_time(k, d));
            const double value = p.sm_util.mean(from, to);
            sum += value;
            peak = std::max(peak, value);
            ++periods;
            newest_ts = ts;
        }
        if (peak > 0) {
            out.push_back(
                {p.pid, newest_ts, static_cast<unsigned int>(std::lround(sum / periods))});
        }
    }
    return out;
}

bool Driver::alive_on(const Process& p, const Handle& h, double t) const {
    return (h.mig < 0 || p.mig_instance == h.mig) && p.start <= t && t < p.end &&
           (!p.until_exit || running(p));
}

const std::vector<const Process*>& Driver::processes(const Handle& h, ProcessKind kind) {
    const double t = now();
    m_listed.clear();
    for (const Process* p : m_by_device.at(h.device)) {
        if (p->kind == kind && alive_on(*p, h, t)) {
            m_listed.push_back(p);
        }
    }
    return m_listed;
}

double Driver::used_mib(const Handle& h) const {
    const double t = now();
    double used = h.mig < 0 ? m_scenario.devices.at(h.device).extra_used_mib.at(t) : 0.0;
    for (const Process* p : m_by_device.at(h.device)) {
        if (alive_on(*p, h, t)) {
            used += p->memory_mib.at(t);
        }
    }
    return used;
}

unsigned int Driver::take_growth(std::size_t device) {
    const Device& d = m_scenario.devices.at(device);
    if (m_growth_done.at(device) >= d.growth_calls) {
        return 0;
    }
    return d.growth_extra * ++m_growth_done[device];
}

nvml::nvmlGpmSample_t Driver::gpm_alloc() {
    m_gpm_samples.push_back(std::make_unique<GpmSample>());
    return reinterpret_cast<nvml::nvmlGpmSample_t>(m_gpm_samples.back().get());
}

bool Driver::gpm_free(nvml::nvmlGpmSample_t sample) {
    return std::erase_if(m_gpm_samples, [&](const auto& s) {
               return reinterpret_cast<nvml::nvmlGpmSample_t>(s.get()) == sample;
           }) > 0;
}

GpmSample* Driver::gpm_sample(nvml::nvmlGpmSample_t sample) {
    for (const auto& s : m_gpm_samples) {
        if (reinterpret_cast<nvml::nvmlGpmSample_t>(s.get()) == sample) {
            return s.get();
        }
    }
    return nullptr;
}

} // namespace gua::fake_nvml
