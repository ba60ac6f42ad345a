// SPDX-License-Identifier: Apache-2.0
// Computed pages of the HTTP server: computed on the worker thread one at a time (a second request
// gets 503 with Retry-After while /metrics keeps answering), query parameters, errors, and a page
// in flight when the server stops.
#include "core/fatal.hpp"
#include "export/exposition.hpp"
#include "export/http_server.hpp"
#include "fleet/http_client.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace gua::exporter {
namespace {

using fleet_testing::http_get;
using namespace std::chrono_literals;

/// A handler that waits, when asked to, until the test releases it (or the server stops).
class Gate {
  public:
    PageRoutes routes(bool hold) {
        return PageRoutes{{"/", "/report"},
                          [this, hold](std::string_view path, const Query& query,
                                       const std::atomic<bool>& cancel) {
                              std::unique_lock<std::mutex> lock(m_mutex);
                              ++m_started;
                              m_changed.notify_all();
                              // Nothing signals `cancel`: look at it every 10 ms, 60 s at most.
                              for (int i = 0; hold && i < 6000 && !m_open && !cancel.load(); ++i) {
                                  m_changed.wait_for(lock, 10ms);
                              }
                              m_saw_cancel = cancel.load();
                              std::string body(path);
                              for (const auto& [key, value] : query) {
                                  body += " " + key + "=" + value;
                              }
                              return Page{200, "text/plain; charset=utf-8", body};
                          }};
    }
    /// Waits until `n` pages have started (at most 60 s).
    bool started(int n) {
        std::unique_lock<std::mutex> lock(m_mutex);
        return m_changed.wait_for(lock, 60s, [&] { return m_started >= n; });
    }
    void open() {
        const std::lock_guard<std::mutex> lock(m_mutex);
        m_open = true;
        m_changed.notify_all();
    }
    bool saw_cancel() {
        const std::lock_guard<std::mutex> lock(m_mutex);
        return m_saw_cancel;
    }

  private:
    std::mutex m_mutex;
    std::condition_variable m_changed;
    int m_started = 0;
    bool m_open = false;
    bool m_saw_cancel = false;
};

TEST(ExportPages, OnePageAtATimeWhileMetricsKeepsAnswering) {
    Gate gate;
    HttpServer server(ListenAddress{"127.0.0.1", 0}, HttpLimits{}, k_content_type,
                      gate.routes(true));
    server.publish("gua_x 1\n");
    fleet_testing::HttpResponse first;
    std::thread client([&] { first = http_get(server.port(), "/report?since=1d&gpu=0&flag"); });
    ASSERT_TRUE(gate.started(1));
    const auto busy = http_get(server.port(), "/");
    EXPECT_EQ(busy.status, 503);
    EXPECT_NE(busy.headers.find("Retry-After: 5"), std::string::npos) << busy.headers;
    const auto metrics = http_get(server.port(), "/metrics");
    EXPECT_EQ(metrics.status, 200);
    EXPECT_EQ(metrics.body, "gua_x 1\n");
    gate.open();
    client.join();
    EXPECT_EQ(first.status, 200);
    EXPECT_EQ(first.body, "/report since=1d gpu=0 flag=");
    EXPECT_NE(first.headers.find("Content-Type: text/plain; charset=utf-8"), std::string::npos);
    // The worker is free again, and / is a page now.
    const auto root = http_get(server.port(), "/");
    EXPECT_EQ(root.status, 200);
    EXPECT_EQ(root.body, "/");
    EXPECT_EQ(http_get(server.port(), "/report.json").status, 404);
    EXPECT_FALSE(gate.saw_cancel());
}

TEST(ExportPages, AnExceptionIsA500AndHeadHasNoBody) {
    HttpServer server(ListenAddress{"127.0.0.1", 0}, HttpLimits{}, k_content_type,
                      PageRoutes{{"/boom", "/ok"},
                                 [](std::string_view path, const Query&, const std::atomic<bool>&) {
                                     if (path == "/boom") {
                                         throw std::runtime_error("the database is gone");
                                     }
                                     return Page{200, "text/html; charset=utf-8", "<p>ok</p>"};
                                 }});
    const auto boom = http_get(server.port(), "/boom");
    EXPECT_EQ(boom.status, 500);
    EXPECT_EQ(boom.body, "the database is gone\n");
    const auto head = http_get(server.port(), "/ok", "HEAD");
    EXPECT_EQ(head.status, 200);
    EXPECT_EQ(head.body, "");
    EXPECT_EQ(http_get(server.port(), "/ok").body, "<p>ok</p>");
}

TEST(ExportPages, StoppingTheServerCancelsThePageInFlight) {
    Gate gate;
    auto server = std::make_unique<HttpServer>(ListenAddress{"127.0.0.1", 0}, HttpLimits{},
                                               k_content_type, gate.routes(true));
    const std::uint16_t port = server->port();
    std::thread client([port] { http_get(port, "/report", "GET"); });
    ASSERT_TRUE(gate.started(1));
    server.reset(); // joins the worker, which sees the cancel flag, before the server stops
    EXPECT_TRUE(gate.saw_cancel());
    client.join();
}

} // namespace
} // namespace gua::exporter
