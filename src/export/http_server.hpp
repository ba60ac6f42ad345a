// SPDX-License-Identifier: Apache-2.0
// The daemon's HTTP endpoint: libmicrohttpd on one internal polling thread, serving /metrics from
// the last published buffer (a scrape never waits on the driver or the database) and pages computed
// on request on a worker thread, one at a time.
#pragma once

#include "core/result.hpp"
#include "export/web_config.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

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

/// A computed response.
struct Page {
    unsigned status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
};

/// A request's query parameters in their order; a parameter without "=" has an empty value.
using Query = std::vector<std::pair<std::string, std::string>>;

/// Computes the page of `path` for `query`. Runs on the server's worker thread, never two at a
/// time; `cancel` turns true when the server stops. Exceptions become a 500 page.
using PageHandler =
    std::function<Page(std::string_view path, const Query& query, const std::atomic<bool>& cancel)>;

/// Pages computed on request: the paths they answer and their handler.
struct PageRoutes {
    std::vector<std::string> paths; ///< e.g. "/", "/report"; empty: none
    PageHandler handler;
    std::chrono::seconds retry_after{5}; ///< Retry-After of the 503 while another is computed
};

/// Serves GET/HEAD /metrics (the published text), the paths of `pages` (computed on the worker
/// thread; a request while another is being computed gets 503 with Retry-After), and / as a link
/// to /metrics unless `pages` has it; 404 for other paths, 405 for other methods. Thread-safe:
/// publish() may be called from any thread.
class HttpServer {
  public:
    /// Binds `address` and starts the server thread. Throws Fatal when it cannot bind (the
    /// message names the address and the reason). `content_type` is sent with /metrics. `web`
    /// adds TLS, client certificates, basic auth and the metrics-only limit (--web-config).
    HttpServer(const ListenAddress& address, const HttpLimits& limits, std::string content_type,
               PageRoutes pages = {}, WebConfig web = {});
    /// A server without a listening socket: it serves the connections handed to it with
    /// serve_connection() exactly as the listening server serves its clients (tests, fuzzing).
    HttpServer(const HttpLimits& limits, std::string content_type, PageRoutes pages = {});
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
    /// "http://HOST:PORT/metrics" (https with TLS), or another `path` on the server.
    std::string url(std::string_view path = "/metrics") const;
    /// Serves the connected stream socket `fd` (the server owns and closes it); false when the
    /// server refused it (then `fd` is closed too).
    bool serve_connection(int fd);

    /// The --web-config settings (TLS, authentication, metrics-only).
    const WebConfig& web() const { return m_web; }
    /// The routes of computed pages.
    const PageRoutes& pages() const { return m_pages; }
    /// Claims the worker for a computed page; false while another one is being computed.
    bool claim_worker();
    /// Runs `job` on the worker thread claimed with claim_worker(); it must call release_worker()
    /// before it ends.
    void start_worker(std::function<void(const std::atomic<bool>& cancel)> job);
    /// Frees the worker for the next page.
    void release_worker() { m_busy.store(false); }

  private:
    ListenAddress m_address;
    std::uint16_t m_port = 0;
    std::string m_content_type;
    mutable std::mutex m_mutex;
    std::shared_ptr<const std::string> m_body;
    PageRoutes m_pages;
    WebConfig m_web;
    std::atomic<bool> m_busy{false};
    std::atomic<bool> m_cancel{false};
    std::mutex m_worker_mutex; ///< guards m_worker
    std::thread m_worker;
    MHD_Daemon* m_daemon = nullptr;
};

} // namespace gua::exporter
