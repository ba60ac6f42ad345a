// SPDX-License-Identifier: Apache-2.0
// Pid file format, stale detection (gone, zombie, reused pid) and atomic writing.
#include "ops/pid_file.hpp"

#include "core/fatal.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace gua::ops {

PidFileInfo read_pid_file(const std::string& path) {
    PidFileInfo info;
    std::ifstream in(path);
    if (!in) {
        return info;
    }
    info.status = PidFileInfo::Status::stale;
    std::string first;
    std::string second;
    std::getline(in, first);
    std::getline(in, second);
    char* end = nullptr;
    const long pid = std::strtol(first.c_str(), &end, 10);
    const std::string key = "start_ticks=";
    if (pid <= 0 || end == first.c_str() || *end != '\0' || second.rfind(key, 0) != 0) {
        info.reason = fmt::format("{} is not a gua pid file", path);
        return info;
    }
    info.id.pid = static_cast<pid_t>(pid);
    info.id.start_ticks = std::strtoull(second.c_str() + key.size(), nullptr, 10);
    const std::optional<ProcessState> now = read_process(info.id.pid);
    if (!now) {
        info.reason = fmt::format("pid {} is not running", pid);
    } else if (now->start_ticks != info.id.start_ticks) {
        info.reason = fmt::format("pid {} now belongs to another process ({})", pid, now->comm);
    } else if (now->state == 'Z' || now->state == 'X') {
        info.reason = fmt::format("pid {} has exited", pid);
    } else {
        info.status = PidFileInfo::Status::running;
    }
    return info;
}

void write_pid_file(const std::string& path, const ProcessId& id) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << id.pid << "\nstart_ticks=" << id.start_ticks << "\n";
        if (!out.flush()) {
            throw Fatal(fmt::format("cannot write pid file {}: {}", tmp, std::strerror(errno)));
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        throw Fatal(fmt::format("cannot write pid file {}: {}", path, std::strerror(errno)));
    }
}

} // namespace gua::ops
