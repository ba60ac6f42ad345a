// The /metrics endpoint: libmicrohttpd on one internal polling thread, serving the last published
// buffer, so a scrape never waits on the driver or the database.
#pragma once

#include "core/result.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

struct MHD_Daemon;

namespace gua::exporter {

/// A numeric listen address.
struct ListenAddress {
    std::string host = "127.0.0.1"; ///< IPv4 dotted quad or IPv6 (without brackets)
    std::uint16_t port = 0;         ///< 0: any free port
};

/// Parses --listen: "PORT" or ":PORT" (loopback, 127.0.0.1), "HOST:PORT" with a numeric IPv4
/// host or "localhost", "[IPv6]:PORT". Errors name the bad text.
Result<ListenAddress> parse_listen(std::string_view text);

/// Resource limits of the server.
struct HttpLimits {
    unsigned connection_limit = 64;             ///< concurrent connections; more are refused
    unsigned timeout_s = 10;                    ///< an idle connection is closed after this long
    std::size_t memory_limit_bytes = 16 * 1024; ///< per connection; bounds request headers
};

/// Serves GET/HEAD /metrics (the published text) and / (a link); 404 for other paths, 405 for
/// other methods. Thread-safe: publish() may be called from any thread.
class HttpServer {
  public:
    /// Binds `address` and starts the server thread. Throws Fatal when it cannot bind (the
    /// message names the address and the reason). `content_type` is sent with /metrics.
    HttpServer(const ListenAddress& address, const HttpLimits& limits, std::string content_type);
    /// A server without a listening socket: it serves the connections handed to it with
    /// serve_connection() exactly as the listening server serves its clients (tests, fuzzing).
    HttpServer(const HttpLimits& limits, std::string content_type);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    /// Replaces the body served at /metrics (scrapes in flight keep the previous one).
    void publish(std::string body);
    /// The body scrapes get now.
    std::shared_ptr<const std::string> current() const;
    /// The Content-Type sent with /metrics.
    const std::string& content_type() const { return m_content_type; }
    /// The port actually bound (useful with port 0).
    std::uint16_t port() const { return m_port; }
    /// "http://HOST:PORT/metrics".
    std::string url() const;
    /// Serves the connected stream socket `fd` (the server owns and closes it); false when the
    /// server refused it (then `fd` is closed too).
    bool serve_connection(int fd);

  private:
    ListenAddress m_address;
    std::uint16_t m_port = 0;
    std::string m_content_type;
    mutable std::mutex m_mutex;
    std::shared_ptr<const std::string> m_body;
    MHD_Daemon* m_daemon = nullptr;
};

} // namespace gua::exporter
