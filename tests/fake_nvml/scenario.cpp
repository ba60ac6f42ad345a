// SPDX-License-Identifier: Apache-2.0
// Scenario JSON parsing and piecewise-constant series for the fake NVML library.
#include "scenario.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace gua::fake_nvml {
namespace {

using nlohmann::json;

/// More samples than any driver's ring holds (each ring query walks up to this many).
constexpr std::size_t k_max_ring_size = 1 << 20;

template <typename T> struct is_vector : std::false_type {};
template <typename T> struct is_vector<std::vector<T>> : std::true_type {};

[[noreturn]] void out_of_range(const char* what) {
    throw std::runtime_error(std::string(what) + ": not a number this field can hold");
}

/// An integer of type T from a JSON number, exactly: a fraction, a value outside T's range or
/// anything but a number is an error (converting it would be undefined behaviour).
template <typename T> T checked_integer(const json& v, const char* what) {
    if (v.is_number_float()) {
        const double d = v.get<double>();
        const double low = static_cast<double>(std::numeric_limits<T>::lowest());
        const double high = static_cast<double>(std::numeric_limits<T>::max()) + 1.0;
        if (!(d >= low && d < high && d == std::trunc(d))) {
            out_of_range(what);
        }
        return static_cast<T>(d);
    }
    if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        return std::in_range<T>(u) ? static_cast<T>(u) : (out_of_range(what), T{});
    }
    if (v.is_number_integer()) {
        const auto i = v.get<std::int64_t>();
        return std::in_range<T>(i) ? static_cast<T>(i) : (out_of_range(what), T{});
    }
    out_of_range(what);
}

/// `v` as T with every numeric conversion checked (checked_integer); vectors element by element.
template <typename T> T checked(const json& v, const char* what) {
    if constexpr (is_vector<T>::value) {
        if (!v.is_array()) {
            throw std::runtime_error(std::string(what) + ": not a list");
        }
        T out;
        for (const json& e : v) {
            out.push_back(checked<typename T::value_type>(e, what));
        }
        return out;
    } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        return checked_integer<T>(v, what);
    } else if constexpr (std::is_floating_point_v<T>) {
        if (!v.is_number()) {
            out_of_range(what);
        }
        return v.get<T>();
    } else {
        return v.get<T>();
    }
}

Series series(const json& j, const char* key, double fallback) {
    std::vector<std::pair<double, double>> points;
    if (j.contains(key)) {
        for (const json& point : j.at(key)) {
            points.emplace_back(checked<double>(point.at(0), key),
                                checked<double>(point.at(1), key));
        }
    }
    return Series(std::move(points), fallback);
}

template <typename T> T get_or(const json& j, const char* key, T fallback) {
    return j.contains(key) && !j.at(key).is_null() ? checked<T>(j.at(key), key) : fallback;
}

/// {"<metric id>": series, ...} under `key`.
std::map<unsigned int, Series> metric_series(const json& j, const char* key) {
    std::map<unsigned int, Series> out;
    if (j.contains(key)) {
        for (const auto& [id, points] : j.at(key).items()) {
            const unsigned long number = std::stoul(id);
            if (number > std::numeric_limits<unsigned int>::max()) {
                out_of_range(key);
            }
            out[static_cast<unsigned int>(number)] = series(json{{"s", points}}, "s", 0);
        }
    }
    return out;
}

std::string default_pci(std::size_t index) {
    char text[32];
    std::snprintf(text, sizeof(text), "00000000:%02X:00.0", static_cast<unsigned>(0x10 + index));
    return text;
}

Device parse_device(const json& j, std::size_t index) {
    Device d;
    char uuid[64];
    std::snprintf(uuid, sizeof(uuid), "GPU-00000000-0000-0000-0000-%012zu", index);
    d.uuid = get_or<std::string>(j, "uuid", uuid);
    d.name = get_or<std::string>(j, "name", "NVIDIA H100 80GB HBM3");
    d.pci_bus_id = get_or<std::string>(j, "pci_bus_id", default_pci(index));
    d.memory_total_mib = get_or(j, "memory_total_mib", d.memory_total_mib);
    d.memory_reserved_mib = get_or(j, "memory_reserved_mib", d.memory_reserved_mib);
    d.util = series(j, "util", 0);
    d.mem_util = series(j, "mem_util", 0);
    d.power_mw = series(j, "power_mw", 60000);
    d.temperature_c = series(j, "temperature_c", 40);
    d.sm_clock_mhz = series(j, "sm_clock_mhz", 1410);
    d.clock_event_reasons = series(j, "clock_event_reasons", 0);
    d.extra_used_mib = series(j, "extra_used_mib", 0);
    d.power_limit_mw = series(j, "power_limit_mw", 700000);
    d.max_sm_clock_mhz = series(j, "max_sm_clock_mhz", 1980);
    d.memory_temperature_c = series(j, "memory_temperature_c", 45);
    d.ecc_uncorrected = series(j, "ecc_uncorrected", 0);
    d.remapped_rows_correctable = series(j, "remapped_rows_correctable", 0);
    d.remapped_rows_uncorrectable = series(j, "remapped_rows_uncorrectable", 0);
    d.remap_pending = series(j, "remap_pending", 0);
    d.pcie_replays = series(j, "pcie_replays", 0);
    d.unsupported_fields = get_or(j, "unsupported_fields", std::vector<unsigned int>{});
    const json gpm = get_or(j, "gpm", json::object());
    d.gpm.supported = get_or(gpm, "supported", false);
    d.gpm.metric_max = get_or(gpm, "metric_max", d.gpm.metric_max);
    if (d.gpm.metric_max != 98 && d.gpm.metric_max != 210 && d.gpm.metric_max != 333) {
        throw std::runtime_error("gpm.metric_max must be 98, 210 or 333");
    }
    d.gpm.metrics = metric_series(gpm, "metrics");
    d.gpm.unsupported_metrics = get_or(gpm, "not_supported_metrics", std::vector<unsigned int>{});
    d.util_period_s = get_or(j, "util_period_s", d.util_period_s);
    if (!(d.util_period_s >= 1e-3 && d.util_period_s <= 3600)) {
        throw std::runtime_error("util_period_s: from 0.001 to 3600 seconds");
    }
    d.ring_size = get_or<std::size_t>(j, "ring_size", d.ring_size);
    if (d.ring_size > k_max_ring_size) {
        throw std::runtime_error("ring_size: at most " + std::to_string(k_max_ring_size));
    }
    d.dry_idle = get_or<std::string>(j, "util_idle_mode", "continuous") == "dry";
    d.boot_timestamps = get_or<std::string>(j, "timestamp_domain", "epoch") == "boot";
    d.energy_start_mj = get_or(j, "energy_start_mj", 0.0);
    d.mig = get_or(j, "mig", false);
    if (j.contains("mig_instances")) {
        for (const json& m : j.at("mig_instances")) {
            d.mig_instances.push_back(
                {checked<std::string>(m.at("uuid"), "uuid"),
                 get_or<std::string>(m, "name", "MIG 1g.10gb"),
                 get_or(m, "memory_total_mib", 9856.0), get_or(m, "gpu_instance_id", 0u),
                 get_or(m, "compute_instance_id", 0u), metric_series(m, "gpm_metrics")});
        }
    }
    d.no_permission = get_or(j, "no_permission", false);
    d.present_from = get_or(j, "present_from", -1e300);
    d.not_supported = get_or(j, "not_supported", std::vector<std::string>{});
    const json quirks = get_or(j, "quirks", json::object());
    d.include_last_seen = get_or(quirks, "include_last_seen", false);
    d.unsorted = get_or(quirks, "unsorted", false);
    d.zero_timestamp_entry = get_or(quirks, "zero_timestamp_entry", false);
    d.dirty_upper_bytes = get_or(quirks, "dirty_upper_bytes", false);
    d.supported_event_types = get_or(j, "supported_event_types", d.supported_event_types);
    const json pcie = get_or(j, "pcie", json::object());
    d.pcie_gen = series(pcie, "gen", 5);
    d.pcie_width = series(pcie, "width", 16);
    d.pcie_gen_max = get_or(pcie, "gen_max", d.pcie_gen_max);
    d.pcie_width_max = get_or(pcie, "width_max", d.pcie_width_max);
    d.remap_failure = series(j, "remap_failure", 0);
    d.persistence_mode = get_or(j, "persistence_mode", d.persistence_mode);
    const json nvlink = get_or(j, "nvlink", json::object());
    d.nvlink_links = get_or(nvlink, "links", 0u);
    d.nvlink_down = get_or(nvlink, "down", std::vector<unsigned int>{});
    d.nvlink_down_at = get_or(nvlink, "down_at", std::vector<std::pair<unsigned int, double>>{});
    d.nvlink_replay = series(nvlink, "replay", 0);
    d.nvlink_recovery = series(nvlink, "recovery", 0);
    d.nvlink_crc = series(nvlink, "crc_flit", 0);
    d.process_util_size = get_or(j, "process_util_size", 0u);
    d.process_util_junk = get_or(j, "process_util_junk", false);
    const json growth = get_or(j, "process_list_growth", json::object());
    d.growth_extra = get_or(growth, "extra", 0u);
    d.growth_calls = get_or(growth, "calls", 0u);
    return d;
}

Process parse_process(const json& j) {
    Process p;
    p.device = checked<std::size_t>(j.at("device"), "device");
    p.mig_instance = get_or(j, "mig_instance", -1);
    if (j.contains("pid_env")) {
        const std::string name = j.at("pid_env").get<std::string>();
        const char* value = std::getenv(name.c_str());
        if (value == nullptr) {
            throw std::runtime_error("pid_env " + name + " is not set");
        }
        const unsigned long pid = std::stoul(value);
        if (pid > std::numeric_limits<unsigned int>::max()) {
            out_of_range("pid_env");
        }
        p.pid = static_cast<unsigned int>(pid);
    } else {
        p.pid = checked<unsigned int>(j.at("pid"), "pid");
    }
    const std::string type = get_or<std::string>(j, "type", "compute");
    if (type != "compute" && type != "graphics" && type != "mps") {
        throw std::runtime_error("unknown process type " + type);
    }
    p.kind = type == "graphics" ? ProcessKind::graphics
             : type == "mps"    ? ProcessKind::mps
                                : ProcessKind::compute;
    p.start = get_or(j, "start", 0.0);
    p.end = get_or(j, "end", k_forever);
    p.until_exit = get_or(j, "until_exit", false);
    p.memory_mib = series(j, "memory_mib", 0);
    p.sm_util = series(j, "sm_util", 0);
    return p;
}

EventSpec parse_event(const json& j) {
    EventSpec e;
    e.device = checked<std::size_t>(j.at("device"), "device");
    e.mig_instance = get_or(j, "mig_instance", -1);
    e.at = get_or(j, "at", 0.0);
    const std::string type = get_or<std::string>(j, "type", "xid");
    const std::map<std::string, unsigned long long> bits = {
        {"sbe", 0x1}, {"dbe", 0x2}, {"pstate", 0x4}, {"xid", 0x8}, {"clock", 0x10}};
    if (bits.count(type) == 0) {
        throw std::runtime_error("unknown event type " + type);
    }
    e.type = bits.at(type);
    e.xid = e.type == 0x8 ? checked<unsigned long long>(j.at("xid"), "xid") : 0;
    if (j.contains("sources")) {
        const auto sources = j.at("sources").get<std::vector<std::string>>();
        e.nvml = std::find(sources.begin(), sources.end(), "nvml") != sources.end();
        e.kmsg = std::find(sources.begin(), sources.end(), "kmsg") != sources.end();
    }
    e.pid = get_or(j, "pid", -1LL);
    e.name = get_or<std::string>(j, "name", "");
    e.message = get_or<std::string>(j, "message", "");
    return e;
}

} // namespace

Series::Series(std::vector<std::pair<double, double>> points, double fallback)
    : m_points(std::move(points)), m_fallback(fallback) {
    std::stable_sort(m_points.begin(), m_points.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
}

double Series::at(double t) const {
    if (m_points.empty()) {
        return m_fallback;
    }
    double value = m_points.front().second;
    for (const auto& [from, v] : m_points) {
        if (from > t) {
            break;
        }
        value = v;
    }
    return value;
}

double Series::integral(double a, double b) const {
    if (b <= a) {
        return 0;
    }
    if (m_points.empty()) {
        return m_fallback * (b - a);
    }
    double total = 0;
    double cursor = a;
    for (std::size_t i = 0; i < m_points.size() && cursor < b; ++i) {
        const double next = i + 1 < m_points.size() ? m_points[i + 1].first : k_forever;
        if (next <= cursor) {
            continue;
        }
        const double until = std::min(next, b);
        total += m_points[i].second * (until - cursor);
        cursor = until;
    }
    return total;
}

double Series::mean(double a, double b) const {
    return b > a ? integral(a, b) / (b - a) : at(a);
}

Scenario load_scenario(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        throw std::runtime_error("cannot read scenario " + path);
    }
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return parse_scenario(text);
}

Scenario parse_scenario(std::string_view text) {
    const json j = json::parse(text);
    Scenario s;
    s.driver_version = get_or<std::string>(j, "driver_version", "");
    s.time_scale = get_or(j, "time_scale", 1.0);
    if (!(s.time_scale > 0 && s.time_scale <= 1e6)) {
        throw std::runtime_error("time_scale: above 0, at most 1e6");
    }
    s.init_error = get_or(j, "init_error", 0);
    const json abi = get_or(j, "abi", json::object());
    s.process_info_stride = get_or<std::size_t>(abi, "process_info_stride", 0);
    const json devices = get_or(j, "devices", json::array());
    for (std::size_t i = 0; i < devices.size(); ++i) {
        s.devices.push_back(parse_device(devices[i], i));
    }
    for (const json& p : get_or(j, "processes", json::array())) {
        s.processes.push_back(parse_process(p));
        if (s.processes.back().device >= s.devices.size()) {
            throw std::runtime_error("process on unknown device");
        }
    }
    for (const std::string& name : get_or(abi, "missing_symbols", std::vector<std::string>{})) {
        s.faults.push_back({name, -1, 0, k_forever, 13}); // FUNCTION_NOT_FOUND at call time
    }
    for (const json& f : get_or(j, "faults", json::array())) {
        s.faults.push_back({f.at("function").get<std::string>(), get_or(f, "device", -1),
                            get_or(f, "from", 0.0), get_or(f, "to", k_forever),
                            checked<int>(f.at("error"), "error")});
    }
    for (const json& e : get_or(j, "events", json::array())) {
        s.events.push_back(parse_event(e));
        const EventSpec& spec = s.events.back();
        if (spec.device >= s.devices.size() ||
            (spec.mig_instance >= 0 && static_cast<std::size_t>(spec.mig_instance) >=
                                           s.devices[spec.device].mig_instances.size())) {
            throw std::runtime_error("event on unknown device or MIG instance");
        }
    }
    std::stable_sort(s.events.begin(), s.events.end(),
                     [](const EventSpec& a, const EventSpec& b) { return a.at < b.at; });
    return s;
}

} // namespace gua::fake_nvml
