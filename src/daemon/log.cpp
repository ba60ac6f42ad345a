// Daemon log lines.
#include "daemon/log.hpp"

#include "core/fatal.hpp"
#include "core/time.hpp"

#include <fmt/format.h>

namespace gua::daemon {

Log::Log(std::string path) : m_path(std::move(path)) {
    if (m_path.empty()) {
        m_file = stderr;
        return;
    }
    m_file = std::fopen(m_path.c_str(), "a");
    if (m_file == nullptr) {
        throw Fatal(fmt::format("cannot open log file {}", m_path));
    }
}

Log::~Log() {
    if (m_file != nullptr && m_file != stderr) {
        std::fclose(m_file);
    }
}

void Log::line(const std::string& message) {
    fmt::print(m_file, "{} {}\n", format_iso8601(wall_now()), message);
    std::fflush(m_file);
}

void Log::reopen() {
    if (m_path.empty()) {
        return;
    }
    std::FILE* fresh = std::fopen(m_path.c_str(), "a");
    if (fresh == nullptr) {
        line(fmt::format("cannot reopen log file {}; still writing to the old one", m_path));
        return;
    }
    std::fclose(m_file);
    m_file = fresh;
}

} // namespace gua::daemon
