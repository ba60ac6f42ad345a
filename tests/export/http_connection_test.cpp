// SPDX-License-Identifier: Apache-2.0
// HttpServer without a listening socket (the seam fuzz_http drives): connections handed over with
// serve_connection() get exactly the answers a TCP client of `--listen` gets.
#include "export/http_server.hpp"

#include <gtest/gtest.h>

#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace gua::exporter {
namespace http_connection_test { // named after the file: unique in a unity batch

/// Sends `request` on a fresh connection of `server`, ends the input, returns the whole answer.
std::string exchange(HttpServer& server, const std::string& request) {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    EXPECT_TRUE(server.serve_connection(fds[1]));
    EXPECT_EQ(::send(fds[0], request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
    ::shutdown(fds[0], SHUT_WR);
    std::string answer;
    pollfd p{fds[0], POLLIN, 0};
    while (::poll(&p, 1, 10000) == 1) {
        char buffer[4096];
        const ssize_t n = ::recv(fds[0], buffer, sizeof buffer, 0);
        if (n <= 0) {
            break;
        }
        answer.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    return answer;
}

TEST(ExportHttpConnection, ServesHandedOverConnectionsLikeTheListeningServer) {
    HttpServer server(HttpLimits{}, "text/plain; version=0.0.4; charset=utf-8");
    server.publish("gua_up 1\n");
    const std::string metrics = exchange(server, "GET /metrics HTTP/1.0\r\n\r\n");
    EXPECT_TRUE(metrics.starts_with("HTTP/1.1 200 OK\r\n")) << metrics;
    EXPECT_TRUE(metrics.ends_with("\r\n\r\ngua_up 1\n")) << metrics;
    EXPECT_NE(metrics.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
              std::string::npos)
        << metrics;
    const std::string post =
        exchange(server, "POST /metrics HTTP/1.0\r\nContent-Length: 2\r\n\r\nxy");
    EXPECT_TRUE(post.starts_with("HTTP/1.1 405 ")) << post;
    EXPECT_NE(post.find("Allow: GET, HEAD\r\n"), std::string::npos) << post;
    EXPECT_TRUE(exchange(server, "GET /nope HTTP/1.0\r\n\r\n").starts_with("HTTP/1.1 404 "));
}

} // namespace http_connection_test
} // namespace gua::exporter
