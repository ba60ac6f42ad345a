// systemd's service notification protocol (sd_notify(3)) without linking libsystemd: one datagram
// to $NOTIFY_SOCKET. The protocol is stable and documented for independent implementations.
#pragma once

#include <string_view>

namespace gua::daemon {

/// Sends `state` (e.g. "READY=1", "WATCHDOG=1") to the service manager named by $NOTIFY_SOCKET (a
/// path, or "@name" for the abstract namespace). Does nothing when it is unset or unusable; never
/// throws.
void notify_service_manager(std::string_view state);

} // namespace gua::daemon
