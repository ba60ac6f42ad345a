// SPDX-License-Identifier: Apache-2.0
// Async-signal-safe handlers that only set lock-free atomics.
#include "daemon/signals.hpp"

#include <csignal>

namespace gua::daemon {

namespace {

SignalFlags g_flags;
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_stop(int) {
    g_flags.stop.store(true);
}
extern "C" void on_reload(int) {
    g_flags.reload.store(true);
}

} // namespace

SignalFlags& install_signal_handlers() {
    g_flags.stop.store(false);
    g_flags.reload.store(false);
    struct sigaction sa {};
    sigemptyset(&sa.sa_mask);
    // Interrupted reads and writes (SQLite's, the log's stdio) resume instead of failing with
    // EINTR; the tick loop's sleeps still wake (nanosleep is never restarted) and look at the
    // flags at least every 100 ms.
    sa.sa_flags = SA_RESTART;
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    sa.sa_handler = on_reload;
    sigaction(SIGHUP, &sa, nullptr);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, nullptr);
    return g_flags;
}

} // namespace gua::daemon
