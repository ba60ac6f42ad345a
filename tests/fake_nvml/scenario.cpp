// SPDX-License-Identifier: Apache-2.0
// Scenario JSON parsing and piecewise-constant series for the fake NVML library.
#include "scenario.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace gua::fake_nvml {
namespace {

using nlohmann::json;

Series series(const json& j, const char* key, double fallback) {
    std::vector<std::pair<double, double>> points;
    if (j.contains(key)) {
        for (const json& point : j.at(key)) {
            points.emplace_back(point.at(0).get<double>(), point.at(1).get<double>());
        }
    }
    return Series(std::move(points), fallback);
}

template <typename T> T get_or(const json& j, const char* key, T fallback) {
    return j.contains(key) && !j.at(key).is_null() ? j.at(key).get<T>() : fallback;
}

/// {"<metric id>": series, ...} under `key`.
std::map<unsigned int, Series> metric_series(const json& j, const char* key) {
    std::map<unsigned int, Series> out;
    if (j.contains(key)) {
        for (const auto& [id, points] : j.at(key).items()) {
            out[static_cast<unsigned int>(std::stoul(id))] = series(json{{"s", points}}, "s", 0);
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
    d.ring_size = get_or<std::size_t>(j, "ring_size", d.ring_size);
    d.dry_idle = get_or<std::string>(j, "util_idle_mode", "continuous") == "dry";
    d.boot_timestamps = get_or<std::string>(j, "timestamp_domain", "epoch") == "boot";
    d.energy_start_mj = get_or(j, "energy_start_mj", 0.0);
    d.mig = get_or(j, "mig", false);
    if (j.contains("mig_instances")) {
        for (const json& m : j.at("mig_instances")) {
            d.mig_instances.push_back(
                {m.at("uuid").get<std::string>(), get_or<std::string>(m, "name", "MIG 1g.10gb"),
                 get_or(m, "memory_total_mib", 9856.0), get_or(m, "gpu_instance_id", 0u),
                 get_or(m, "compute_instance_id", 0u), metric_series(m, "gpm_metrics")});
        }
    }
    d.no_permission = get_or(j, "no_permission", false);
    d.not_supported = get_or(j, "not_supported", std::vector<std::string>{});
    const json quirks = get_or(j, "quirks", json::object());
    d.include_last_seen = get_or(quirks, "include_last_seen", false);
    d.unsorted = get_or(quirks, "unsorted", false);
    d.zero_timestamp_entry = get_or(quirks, "zero_timestamp_entry", false);
    d.dirty_upper_bytes = get_or(quirks, "dirty_upper_bytes", false);
    d.process_util_size = get_or(j, "process_util_size", 0u);
    d.process_util_junk = get_or(j, "process_util_junk", false);
    const json growth = get_or(j, "process_list_growth", json::object());
    d.growth_extra = get_or(growth, "extra", 0u);
    d.growth_calls = get_or(growth, "calls", 0u);
    return d;
}

Process parse_process(const json& j) {
    Process p;
    p.device = j.at("device").get<std::size_t>();
    p.mig_instance = get_or(j, "mig_instance", -1);
    if (j.contains("pid_env")) {
        const std::string name = j.at("pid_env").get<std::string>();
        const char* value = std::getenv(name.c_str());
        if (value == nullptr) {
            throw std::runtime_error("pid_env " + name + " is not set");
        }
        p.pid = static_cast<unsigned int>(std::stoul(value));
    } else {
        p.pid = j.at("pid").get<unsigned int>();
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
                            f.at("error").get<int>()});
    }
    return s;
}

} // namespace gua::fake_nvml
