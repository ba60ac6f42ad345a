// SPDX-License-Identifier: Apache-2.0
// Test helper: raw HTTP/1.1 over loopback sockets (normal GETs, and the misbehaving clients of the
// load test), plus free-port selection.
#pragma once

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <netinet/in.h>
#include <poll.h>
#include <random>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace gua::fleet_testing {

/// True when a listening socket could bind 127.0.0.1:`port` now (0: any port; `bound` gets it).
inline bool can_bind(std::uint16_t port, std::uint16_t& bound) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    socklen_t len = sizeof a;
    ok = ok && getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
    close(fd);
    bound = ntohs(a.sin_port);
    return ok;
}

/// A port free a moment ago on 127.0.0.1, chosen below the kernel's ephemeral range
/// (net.ipv4.ip_local_port_range): no outgoing connection or port-0 bind of another test can take
/// it before its user binds it, as one of a load test's thousands of scrapes once did.
inline std::uint16_t free_port() {
    int ephemeral_low = 32768;
    if (std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range"); range) {
        range >> ephemeral_low;
    }
    std::uint16_t port = 0;
    if (ephemeral_low > 11000) {
        static std::mt19937 rng(std::random_device{}());
        std::uniform_int_distribution<int> pick(10000, ephemeral_low - 1);
        for (int attempt = 0; attempt < 100; ++attempt) {
            if (can_bind(static_cast<std::uint16_t>(pick(rng)), port)) {
                return port;
            }
        }
    }
    can_bind(0, port); // a narrow or odd range: any free port
    return port;
}

/// A connected loopback socket (-1 on failure); the caller closes it.
inline int connect_loopback(std::uint16_t port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/// Sends all of `data`; false on error.
inline bool send_all(int fd, const std::string& data) {
    std::size_t sent = 0;
    while (sent < data.size()) {
        const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) {
            return false;
        }
        sent += static_cast<std::size_t>(n);
    }
    return true;
}

/// Reads until the peer closes or `timeout` passes; returns what arrived.
inline std::string read_until_close(int fd, std::chrono::milliseconds timeout) {
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    char buf[16384];
    while (true) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            break;
        }
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, static_cast<int>(left.count())) <= 0) {
            break;
        }
        const ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0) {
            break;
        }
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

/// A response: status code (0 when none arrived) and body.
struct HttpResponse {
    int status = 0;
    std::string headers;
    std::string body;
};

/// Sends `request` on a fresh connection and reads the whole answer ("Connection: close").
inline HttpResponse http_raw(std::uint16_t port, const std::string& request,
                             std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    HttpResponse r;
    const int fd = connect_loopback(port);
    if (fd < 0) {
        return r;
    }
    if (send_all(fd, request)) {
        const std::string all = read_until_close(fd, timeout);
        const std::size_t end = all.find("\r\n\r\n");
        if (all.starts_with("HTTP/1.") && all.size() > 12) {
            r.status = std::stoi(all.substr(9, 3));
        }
        if (end != std::string::npos) {
            r.headers = all.substr(0, end);
            r.body = all.substr(end + 4);
        }
    }
    close(fd);
    return r;
}

/// GET `path` with Connection: close.
inline HttpResponse http_get(std::uint16_t port, const std::string& path,
                             const std::string& method = "GET") {
    return http_raw(port, method + " " + path +
                              " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
}

} // namespace gua::fleet_testing
