// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: raw HTTP requests to `gua daemon --listen`, served by the exporter's real
// server (libmicrohttpd with gua's limits and request handler). The server has no listening
// socket: each input arrives on a socket pair whose other end the server is handed (a TCP pair
// would leave a TIME_WAIT socket per input). The first line of the input also goes through the
// --listen address parser.
#include "export/http_server.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <poll.h>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <unistd.h>

namespace {

gua::exporter::HttpServer& server() {
    static gua::exporter::HttpServer s(gua::exporter::HttpLimits{},
                                       "text/plain; version=0.0.4; charset=utf-8");
    return s;
}

/// Sends `request`, then end of input, and returns everything the server answered until it
/// closed the connection. Aborts when the server neither answers nor closes within 20 s.
std::string exchange(int fd, std::string_view request) {
    std::string answer;
    bool shut = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
        if (!shut && request.empty()) {
            ::shutdown(fd, SHUT_WR);
            shut = true;
        }
        pollfd p{fd, static_cast<short>(POLLIN | (shut ? 0 : POLLOUT)), 0};
        if (::poll(&p, 1, 100) < 0) {
            continue; // EINTR: libFuzzer's timers
        }
        if ((p.revents & POLLOUT) != 0 && !request.empty()) {
            const ssize_t n = ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
            if (n < 0) {
                request = {}; // the server closed its end early: fine
            } else {
                request.remove_prefix(static_cast<std::size_t>(n));
            }
        }
        if ((p.revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
            char buffer[4096];
            const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
            if (n <= 0) {
                return answer;
            }
            answer.append(buffer, static_cast<std::size_t>(n));
        }
        if (std::chrono::steady_clock::now() > deadline) {
            std::abort(); // the server hangs on this request
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view request(reinterpret_cast<const char*>(data), size);
    (void)gua::exporter::parse_listen(request.substr(0, request.find('\n')));
    static bool published = false;
    if (!published) {
        server().publish("# TYPE gua_up gauge\ngua_up 1\n");
        published = true;
    }
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
        std::abort();
    }
    const int client = fds[0];
    if (!server().serve_connection(fds[1])) {
        ::close(client);
        return 0; // connection limit reached: the server refuses, as it would a TCP client
    }
    const std::string answer = exchange(client, request);
    ::close(client);
    if (!answer.empty() && !answer.starts_with("HTTP/1.")) {
        std::abort();
    }
    return 0;
}
