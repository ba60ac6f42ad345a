// SPDX-License-Identifier: Apache-2.0
// Daemon log lines.
#include "daemon/log.hpp"

#include "core/fatal.hpp"
#include "core/printable.hpp"
#include "core/time.hpp"

#include <fmt/format.h>

namespace gua::daemon {

Log::Log(std::string path) : m_path(std::move(path)) {
    if (m_path.empty()) {
        m_file = stderr;
        return;
    }
    m_file = std::fopen(m_path.c_str(), "ae"); // close-on-exec: notify commands never inherit it
    if (m_file == nullptr) {
        throw Fatal(fmt::format("cannot open log file {}", m_path));
    }
}

Log::~Log() {
    if (m_file != nullptr && m_file != stderr) {
        std::fclose(m_file);
    }
}

void Log::line(const std::string& message) noexcept {
    try {
        // One event, one line: text from outside (a config error quoting the file, a process
        // name) cannot start a line of its own or send control sequences to a terminal.
        const std::string text =
            fmt::format("{} {}\n", format_iso8601(wall_now()), printable(message));
        const std::lock_guard lock(m_mutex); // the delivery thread logs too
        std::fwrite(text.data(), 1, text.size(), m_file);
        std::fflush(m_file);
        std::clearerr(m_file); // a full disk loses this line, not the ones after it
    } catch (...) {
        // Out of memory formatting the line: the line is lost, the daemon goes on.
    }
}

void Log::reopen() noexcept {
    if (m_path.empty()) {
        return;
    }
    std::FILE* fresh = std::fopen(m_path.c_str(), "ae");
    if (fresh == nullptr) {
        try {
            line(fmt::format("cannot reopen log file {}; still writing to the old one", m_path));
        } catch (...) {
            // Out of memory: nothing more to say.
        }
        return;
    }
    const std::lock_guard lock(m_mutex);
    std::fclose(m_file);
    m_file = fresh;
}

} // namespace gua::daemon
