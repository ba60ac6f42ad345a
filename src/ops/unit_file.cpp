// SPDX-License-Identifier: Apache-2.0
// A small reader for the unit-file settings doctor cares about.
#include "ops/unit_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace gua::ops {

namespace fs = std::filesystem;

namespace {

std::string trim(const std::string& s) {
    const std::size_t b = s.find_first_not_of(" \t\r");
    const std::size_t e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

void read_file(const std::string& path, UnitSettings& out) {
    std::ifstream in(path);
    std::string line;
    std::string section;
    while (std::getline(in, line)) {
        line = trim(line);
        if (line.empty() || line[0] == '#' || line[0] == ';') {
            continue;
        }
        if (line.front() == '[' && line.back() == ']') {
            section = line.substr(1, line.size() - 2);
            continue;
        }
        const std::size_t eq = line.find('=');
        if (section != "Service" || eq == std::string::npos) {
            continue;
        }
        const std::string key = trim(line.substr(0, eq));
        const std::string value = trim(line.substr(eq + 1));
        out.assigned.insert(key);
        if (value.empty()) {
            out.service.erase(key);
        } else {
            out.service[key].push_back(value);
        }
    }
}

void read_drop_ins(const fs::path& dir, UnitSettings& out) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
        if (e.path().extension() == ".conf") {
            files.push_back(e.path());
        }
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
        read_file(f.string(), out);
    }
}

bool is_true(const std::string& v) {
    return v == "yes" || v == "true" || v == "1" || v == "on";
}

} // namespace

std::string UnitSettings::last(const std::string& key) const {
    const auto it = service.find(key);
    return it == service.end() || it->second.empty() ? "" : it->second.back();
}

std::optional<DurationUs> parse_time_span(const std::string& text) {
    DurationUs total = 0;
    std::size_t pos = 0;
    bool any = false;
    while (pos < text.size()) {
        while (pos < text.size() && text[pos] == ' ') {
            ++pos;
        }
        if (pos == text.size()) {
            break;
        }
        char* end = nullptr;
        const double number = std::strtod(text.c_str() + pos, &end);
        if (end == text.c_str() + pos) {
            return std::nullopt;
        }
        pos = static_cast<std::size_t>(end - text.c_str());
        std::string unit;
        while (pos < text.size() && std::isalpha(static_cast<unsigned char>(text[pos]))) {
            unit += text[pos++];
        }
        double scale = 0;
        if (unit.empty() || unit == "s" || unit == "sec" || unit == "second" || unit == "seconds") {
            scale = 1e6;
        } else if (unit == "ms" || unit == "msec") {
            scale = 1e3;
        } else if (unit == "us" || unit == "usec") {
            scale = 1;
        } else if (unit == "m" || unit == "min" || unit == "minute" || unit == "minutes") {
            scale = 60e6;
        } else if (unit == "h" || unit == "hr" || unit == "hour" || unit == "hours") {
            scale = 3600e6;
        } else {
            return std::nullopt;
        }
        total += static_cast<DurationUs>(number * scale);
        any = true;
    }
    return any ? std::optional<DurationUs>(total) : std::nullopt;
}

UnitSettings read_unit_settings(const std::string& unit_path, const std::string& admin_drop_ins) {
    UnitSettings out;
    read_file(unit_path, out);
    if (unit_path + ".d" != admin_drop_ins) {
        read_drop_ins(unit_path + ".d", out);
    }
    read_drop_ins(admin_drop_ins, out);
    if (const std::string w = out.last("WatchdogSec"); !w.empty()) {
        out.watchdog_us = parse_time_span(w);
    }
    return out;
}

std::vector<std::string> blocking_settings(const UnitSettings& unit) {
    std::vector<std::string> out;
    bool nvidia_allowed = false;
    bool device_allow = false;
    if (const auto it = unit.service.find("DeviceAllow"); it != unit.service.end()) {
        device_allow = true;
        for (const std::string& v : it->second) {
            nvidia_allowed = nvidia_allowed || v.find("nvidia") != std::string::npos;
        }
    }
    if (is_true(unit.last("PrivateDevices"))) {
        out.push_back("PrivateDevices=yes hides /dev/nvidia*");
    }
    const std::string policy = unit.last("DevicePolicy");
    if ((policy == "closed" || policy == "strict" || device_allow) && !nvidia_allowed) {
        out.push_back("DevicePolicy=/DeviceAllow= deny /dev/nvidia* (no nvidia device allowed)");
    }
    if (is_true(unit.last("ProtectClock")) && !nvidia_allowed) {
        out.push_back("ProtectClock=yes implies DeviceAllow=char-rtc r, which denies /dev/nvidia*");
    }
    if (const std::string p = unit.last("ProtectProc"); !p.empty() && p != "default") {
        out.push_back(fmt::format("ProtectProc={} hides other users' processes", p));
    }
    if (unit.last("ProcSubset") == "pid") {
        out.push_back("ProcSubset=pid hides /proc/driver/nvidia");
    }
    if (is_true(unit.last("PrivateUsers"))) {
        out.push_back("PrivateUsers=yes maps every other user to nobody");
    }
    if (is_true(unit.last("DynamicUser"))) {
        out.push_back("DynamicUser=yes puts the database where users cannot read it");
    }
    return out;
}

} // namespace gua::ops
