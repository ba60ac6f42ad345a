// SPDX-License-Identifier: Apache-2.0
// Test helper: a loopback stand-in for a Prometheus server (127.0.0.1, one thread per
// connection) whose answers a test scripts — plausible, malformed, huge, trickling or silent —
// and that stops by itself when it goes out of scope.
#pragma once

#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <netinet/in.h>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

namespace gua::fleet_testing {

/// One request as the stand-in read it: its path (without the query string) and its form
/// parameters (from the query string or the POSTed body, percent-decoded; repeated names keep
/// the last value).
struct StandInRequest {
    std::string path;
    std::map<std::string, std::string> form;
};

/// What the stand-in sends back: `head`, then `part(0)` … `part(parts - 1)`, then `tail`, as
/// one body of HTTP `status` (generated as it is sent: a body of gigabytes costs nothing here).
/// `trickle`: after the headers, one byte of JSON whitespace every 100 ms until the client
/// leaves; `silent`: no answer at all.
struct StandInReply {
    int status = 200;
    std::string head;
    std::function<std::string(std::size_t)> part;
    std::size_t parts = 0;
    std::string tail;
    bool trickle = false;
    bool silent = false;
};

using StandInHandler = std::function<StandInReply(const StandInRequest&)>;

class PrometheusStandIn {
  public:
    explicit PrometheusStandIn(StandInHandler handler) : m_handler(std::move(handler)) {
        m_listen = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        if (m_listen < 0 || bind(m_listen, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
            listen(m_listen, 64) != 0 ||
            getsockname(m_listen, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
            throw std::runtime_error("cannot listen on 127.0.0.1");
        }
        m_port = ntohs(addr.sin_port);
        m_acceptor = std::thread([this] { accept_loop(); });
    }
    ~PrometheusStandIn() {
        m_stop = true;
        m_acceptor.join();
        const std::lock_guard<std::mutex> lock(m_mutex);
        for (std::thread& t : m_connections) {
            t.join();
        }
        close(m_listen);
    }
    PrometheusStandIn(const PrometheusStandIn&) = delete;
    PrometheusStandIn& operator=(const PrometheusStandIn&) = delete;

    std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
    int requests() const { return m_requests; }

  private:
    void accept_loop() {
        while (!m_stop) {
            pollfd p{m_listen, POLLIN, 0};
            if (poll(&p, 1, 50) <= 0) {
                continue;
            }
            const int fd = accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) {
                continue;
            }
            const std::lock_guard<std::mutex> lock(m_mutex);
            m_connections.emplace_back([this, fd] {
                serve(fd);
                close(fd);
            });
        }
    }

    /// Waits up to 50 ms for `events` on `fd`; false when the stand-in stops.
    bool wait_for(int fd, short events) const {
        for (;;) {
            if (m_stop) {
                return false;
            }
            pollfd p{fd, events, 0};
            const int n = poll(&p, 1, 50);
            if (n > 0) {
                return true;
            }
        }
    }

    bool send_all(int fd, const std::string& data) const {
        std::size_t sent = 0;
        while (sent < data.size()) {
            if (!wait_for(fd, POLLOUT)) {
                return false;
            }
            const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
            if (n <= 0) {
                return false; // the client left
            }
            sent += static_cast<std::size_t>(n);
        }
        return true;
    }

    static std::string decode(const std::string& text) {
        std::string out;
        for (std::size_t i = 0; i < text.size(); ++i) {
            if (text[i] == '+') {
                out += ' ';
            } else if (text[i] == '%' && i + 2 < text.size()) {
                out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
                i += 2;
            } else {
                out += text[i];
            }
        }
        return out;
    }

    static void parse_form(const std::string& text, std::map<std::string, std::string>& form) {
        std::size_t at = 0;
        while (at <= text.size() && !text.empty()) {
            const std::size_t amp = std::min(text.find('&', at), text.size());
            const std::string pair = text.substr(at, amp - at);
            const std::size_t eq = pair.find('=');
            if (eq != std::string::npos) {
                form[decode(pair.substr(0, eq))] = decode(pair.substr(eq + 1));
            }
            at = amp + 1;
        }
    }

    /// Reads one request (headers and a Content-Length body); false when none came.
    bool read_request(int fd, StandInRequest& request) const {
        std::string data;
        std::size_t header_end = std::string::npos;
        std::size_t want = 0;
        char buffer[65536];
        for (;;) {
            if (header_end != std::string::npos && data.size() >= header_end + 4 + want) {
                break;
            }
            if (!wait_for(fd, POLLIN)) {
                return false;
            }
            const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
            if (n <= 0) {
                return false;
            }
            data.append(buffer, static_cast<std::size_t>(n));
            if (header_end == std::string::npos) {
                header_end = data.find("\r\n\r\n");
                if (header_end != std::string::npos) {
                    const std::size_t cl = data.find("Content-Length: ");
                    if (cl != std::string::npos && cl < header_end) {
                        want = std::stoul(data.substr(cl + 16));
                    }
                }
            }
        }
        const std::size_t sp1 = data.find(' ');
        const std::size_t sp2 = data.find(' ', sp1 + 1);
        const std::string target = data.substr(sp1 + 1, sp2 - sp1 - 1);
        const std::size_t q = target.find('?');
        request.path = target.substr(0, q);
        if (q != std::string::npos) {
            parse_form(target.substr(q + 1), request.form);
        }
        parse_form(data.substr(header_end + 4, want), request.form);
        return true;
    }

    void serve(int fd) {
        StandInRequest request;
        if (!read_request(fd, request)) {
            return;
        }
        ++m_requests;
        const StandInReply reply = m_handler(request);
        if (reply.silent) {
            char byte = 0;
            while (wait_for(fd, POLLIN) && recv(fd, &byte, 1, 0) > 0) {
            }
            return;
        }
        std::size_t length = reply.head.size() + reply.tail.size();
        for (std::size_t i = 0; i < reply.parts; ++i) {
            length += reply.part(i).size();
        }
        std::string headers = "HTTP/1.1 " + std::to_string(reply.status) +
                              " OK\r\nContent-Type: application/json\r\nConnection: close\r\n";
        if (!reply.trickle) {
            headers += "Content-Length: " + std::to_string(length) + "\r\n";
        }
        if (!send_all(fd, headers + "\r\n" + reply.head)) {
            return;
        }
        if (reply.trickle) {
            while (send_all(fd, " ")) {
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            }
            return;
        }
        std::string chunk;
        for (std::size_t i = 0; i < reply.parts; ++i) {
            chunk += reply.part(i);
            if (chunk.size() >= 1 << 20) {
                if (!send_all(fd, chunk)) {
                    return;
                }
                chunk.clear();
            }
        }
        send_all(fd, chunk + reply.tail);
    }

    StandInHandler m_handler;
    int m_listen = -1;
    int m_port = 0;
    std::atomic<bool> m_stop{false};
    std::atomic<int> m_requests{0};
    std::mutex m_mutex;
    std::vector<std::thread> m_connections;
    std::thread m_acceptor;
};

} // namespace gua::fleet_testing
