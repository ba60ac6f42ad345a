// SPDX-License-Identifier: Apache-2.0
// systemd's service notification protocol (sd_notify(3)) without linking libsystemd: one datagram
// to $NOTIFY_SOCKET. The protocol is stable and documented for independent implementations.
#pragma once

#include "core/time.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace gua::daemon {

/// Sends `state` (e.g. "READY=1", "WATCHDOG=1") to the service manager named by $NOTIFY_SOCKET (a
/// path, or "@name" for the abstract namespace). Does nothing when it is unset or unusable; never
/// throws.
void notify_service_manager(std::string_view state);

/// Paces WATCHDOG=1 keep-alives: the service manager asks for them through $WATCHDOG_USEC (and
/// $WATCHDOG_PID, sd_watchdog_enabled(3)); gua pings after a finished tick, at most every quarter
/// of that timeout, so a tick loop at 10 Hz sends one datagram per quarter timeout, not ten a
/// second.
class WatchdogPacer {
  public:
    /// The pacer the environment asks for: disabled without $WATCHDOG_USEC, when it is not a
    /// positive number, or when $WATCHDOG_PID names another process.
    static WatchdogPacer from_environment();
    /// Pings at most every `timeout_us` / 4; never when `timeout_us` is empty.
    explicit WatchdogPacer(std::optional<DurationUs> timeout_us);

    /// True when a keep-alive is due at monotonic time `now_us`; a true answer counts as sent.
    bool due(std::int64_t now_us);

  private:
    std::optional<DurationUs> m_period_us;
    std::optional<std::int64_t> m_last_us;
};

} // namespace gua::daemon
