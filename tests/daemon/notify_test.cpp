// SPDX-License-Identifier: Apache-2.0
// daemon::notify_service_manager: the sd_notify datagram reaches a socket named by $NOTIFY_SOCKET
// (a path or an abstract name), and nothing happens without one. WatchdogPacer: keep-alives only
// when $WATCHDOG_USEC asks for them, at most every quarter of it.
#include "daemon/notify.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace gua::daemon {
namespace {

/// A datagram socket bound to `name` ("/path" or "@abstract"), like systemd's notify socket.
class NotifySocket {
  public:
    explicit NotifySocket(const std::string& name) {
        m_fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::memcpy(address.sun_path, name.data(), name.size());
        if (name[0] == '@') {
            address.sun_path[0] = '\0';
        }
        const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
        m_bound = ::bind(m_fd, reinterpret_cast<const sockaddr*>(&address), length) == 0;
        setenv("NOTIFY_SOCKET", name.c_str(), 1);
    }
    ~NotifySocket() {
        unsetenv("NOTIFY_SOCKET");
        ::close(m_fd);
    }
    NotifySocket(const NotifySocket&) = delete;
    NotifySocket& operator=(const NotifySocket&) = delete;

    bool bound() const { return m_bound; }
    /// The next datagram, or "" after `timeout_ms`.
    std::string receive(int timeout_ms = 2000) const {
        pollfd pfd{m_fd, POLLIN, 0};
        if (::poll(&pfd, 1, timeout_ms) != 1) {
            return "";
        }
        char buffer[256];
        const ssize_t n = ::recv(m_fd, buffer, sizeof buffer, 0);
        return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
    }

  private:
    int m_fd = -1;
    bool m_bound = false;
};

TEST(DaemonNotify, SendsTheStateToAPathSocket) {
    const test::TempDir dir;
    const NotifySocket socket(dir.file("notify"));
    ASSERT_TRUE(socket.bound());
    notify_service_manager("READY=1");
    EXPECT_EQ(socket.receive(), "READY=1");
    notify_service_manager("WATCHDOG=1");
    EXPECT_EQ(socket.receive(), "WATCHDOG=1");
}

TEST(DaemonNotify, SendsTheStateToAnAbstractSocket) {
    const NotifySocket socket("@gua-notify-test-" + std::to_string(getpid()));
    ASSERT_TRUE(socket.bound());
    notify_service_manager("STOPPING=1");
    EXPECT_EQ(socket.receive(), "STOPPING=1");
}

/// The descriptors this process has open now.
std::size_t open_descriptors() {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& entry :
         std::filesystem::directory_iterator("/proc/self/fd")) {
        ++n;
    }
    return n;
}

TEST(DaemonNotify, DoesNothingWithoutAUsableSocket) {
    const test::TempDir dir;
    const NotifySocket socket(dir.file("notify")); // listening: a datagram sent would arrive
    ASSERT_TRUE(socket.bound());
    const std::filesystem::path cwd = std::filesystem::current_path();
    std::filesystem::current_path(dir.path()); // "notify" relative to here is that very socket
    const std::size_t descriptors = open_descriptors();
    for (const char* bad : {"notify", "relative/name", "/nonexistent/gua/notify", ""}) {
        setenv("NOTIFY_SOCKET", bad, 1);
        notify_service_manager("READY=1");
        EXPECT_EQ(socket.receive(100), "") << "NOTIFY_SOCKET=" << bad;
    }
    const std::string too_long = "/" + std::string(200, 'x'); // longer than sun_path
    setenv("NOTIFY_SOCKET", too_long.c_str(), 1);
    notify_service_manager("READY=1");
    unsetenv("NOTIFY_SOCKET");
    notify_service_manager("READY=1");
    EXPECT_EQ(socket.receive(100), "");
    EXPECT_EQ(open_descriptors(), descriptors) << "a socket left open";
    std::filesystem::current_path(cwd);
    // The same socket named properly does receive: the refusals above were not a dead socket.
    setenv("NOTIFY_SOCKET", dir.file("notify").c_str(), 1);
    notify_service_manager("READY=1");
    EXPECT_EQ(socket.receive(), "READY=1");
}

TEST(DaemonWatchdog, PingsAtMostEveryQuarterOfTheTimeout) {
    WatchdogPacer pacer(400'000);
    EXPECT_TRUE(pacer.due(1'000));
    EXPECT_FALSE(pacer.due(50'000));
    EXPECT_FALSE(pacer.due(100'999));
    EXPECT_TRUE(pacer.due(101'000));
    EXPECT_FALSE(pacer.due(200'000));
    EXPECT_TRUE(pacer.due(260'000)); // a late tick: the next quarter counts from this ping
    EXPECT_FALSE(pacer.due(359'999));
    EXPECT_TRUE(pacer.due(360'000));
}

TEST(DaemonWatchdog, NeverWithoutATimeout) {
    WatchdogPacer pacer(std::nullopt);
    EXPECT_FALSE(pacer.due(0));
    EXPECT_FALSE(pacer.due(1'000'000'000'000));
}

/// Sets (or with nullptr unsets) the watchdog variables for one test and restores them after.
class WatchdogEnvironment {
  public:
    WatchdogEnvironment(const char* usec, const char* pid) {
        set("WATCHDOG_USEC", usec);
        set("WATCHDOG_PID", pid);
    }
    ~WatchdogEnvironment() {
        unsetenv("WATCHDOG_USEC");
        unsetenv("WATCHDOG_PID");
    }
    WatchdogEnvironment(const WatchdogEnvironment&) = delete;
    WatchdogEnvironment& operator=(const WatchdogEnvironment&) = delete;

  private:
    static void set(const char* name, const char* value) {
        if (value == nullptr) {
            unsetenv(name);
        } else {
            setenv(name, value, 1);
        }
    }
};

/// How many keep-alives the pacer read from the environment sends at 0, 1 s, ..., 9 s.
int pings_over_ten_seconds() {
    WatchdogPacer pacer = WatchdogPacer::from_environment();
    int pings = 0;
    for (std::int64_t s = 0; s < 10; ++s) {
        pings += pacer.due(s * 1'000'000) ? 1 : 0;
    }
    return pings;
}

TEST(DaemonWatchdog, ReadsTheTimeoutAndPidLikeSdWatchdogEnabled) {
    const std::string self = std::to_string(getpid());
    const std::string other = std::to_string(getpid() + 1);
    {
        const WatchdogEnvironment env("8000000", nullptr); // 8 s: every 2 s
        EXPECT_EQ(pings_over_ten_seconds(), 5);
    }
    {
        const WatchdogEnvironment env("8000000", self.c_str());
        EXPECT_EQ(pings_over_ten_seconds(), 5);
    }
    {
        const WatchdogEnvironment env("8000000", other.c_str()); // meant for another process
        EXPECT_EQ(pings_over_ten_seconds(), 0);
    }
    for (const char* bad : {"", "0", "-5", "12x", "abc"}) {
        const WatchdogEnvironment env(bad, nullptr);
        EXPECT_EQ(pings_over_ten_seconds(), 0) << "WATCHDOG_USEC=" << bad;
    }
    const WatchdogEnvironment none(nullptr, nullptr);
    EXPECT_EQ(pings_over_ten_seconds(), 0);
}

} // namespace
} // namespace gua::daemon
