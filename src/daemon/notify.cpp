// SPDX-License-Identifier: Apache-2.0
// sd_notify without libsystemd (which would add ~1 MB of resident shared libraries to the daemon).
#include "daemon/notify.hpp"

#include <charconv>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace gua::daemon {

void notify_service_manager(std::string_view state) {
    const char* path = std::getenv("NOTIFY_SOCKET");
    if (path == nullptr || (path[0] != '/' && path[0] != '@')) {
        return;
    }
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::size_t length = std::strlen(path);
    if (length >= sizeof address.sun_path) {
        return;
    }
    std::memcpy(address.sun_path, path, length);
    if (address.sun_path[0] == '@') {
        address.sun_path[0] = '\0';
    }
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return;
    }
    const auto address_length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length);
    [[maybe_unused]] const ssize_t sent =
        ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                 reinterpret_cast<const sockaddr*>(&address), address_length);
    ::close(fd);
}

namespace {

/// The positive decimal number `text` holds entirely, if it does.
std::optional<std::int64_t> positive_number(const char* text) {
    if (text == nullptr) {
        return std::nullopt;
    }
    const std::string_view digits(text);
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc{} || end != digits.data() + digits.size() || value <= 0) {
        return std::nullopt;
    }
    return value;
}

} // namespace

WatchdogPacer WatchdogPacer::from_environment() {
    const std::optional<std::int64_t> timeout = positive_number(std::getenv("WATCHDOG_USEC"));
    const char* pid_text = std::getenv("WATCHDOG_PID");
    if (pid_text != nullptr && positive_number(pid_text) != std::int64_t{::getpid()}) {
        return WatchdogPacer(std::nullopt);
    }
    return WatchdogPacer(timeout);
}

WatchdogPacer::WatchdogPacer(std::optional<DurationUs> timeout_us) {
    if (timeout_us) {
        m_period_us = *timeout_us / 4;
    }
}

bool WatchdogPacer::due(std::int64_t now_us) {
    if (!m_period_us || (m_last_us && now_us - *m_last_us < *m_period_us)) {
        return false;
    }
    m_last_us = now_us;
    return true;
}

} // namespace gua::daemon
