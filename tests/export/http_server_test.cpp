// SPDX-License-Identifier: Apache-2.0
// The /metrics HTTP server: address parsing, routes, methods, the published buffer, limits.
#include "core/fatal.hpp"
#include "export/exposition.hpp"
#include "export/http_server.hpp"
#include "fleet/http_client.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace gua::exporter {
namespace {

using fleet_testing::http_get;
using fleet_testing::http_raw;

TEST(ExportListen, ParsesPortsAndAddresses) {
    const auto ok = [](std::string_view text) {
        const Result<ListenAddress> a = parse_listen(text);
        EXPECT_TRUE(a.ok()) << text;
        return a.ok() ? a.value().host + " " + std::to_string(a.value().port) : "";
    };
    EXPECT_EQ(ok("9400"), "127.0.0.1 9400");
    EXPECT_EQ(ok(":9400"), "127.0.0.1 9400");
    EXPECT_EQ(ok("0.0.0.0:9400"), "0.0.0.0 9400");
    EXPECT_EQ(ok("localhost:1"), "127.0.0.1 1");
    EXPECT_EQ(ok("[::1]:9400"), "::1 9400");
    EXPECT_EQ(ok("127.0.0.1:0"), "127.0.0.1 0");
    for (const char* bad : {"", "x", "host.example:9400", "127.0.0.1:", "1.2.3.4:70000",
                            "127.0.0.1:94a0", "[::1]", "1.2.3:9400"}) {
        const Result<ListenAddress> a = parse_listen(bad);
        EXPECT_FALSE(a.ok()) << bad;
        if (!a.ok()) {
            EXPECT_NE(a.error().message.find("--listen"), std::string::npos);
        }
    }
}

class ExportHttp : public ::testing::Test {
  protected:
    HttpServer m_server{ListenAddress{"127.0.0.1", 0}, HttpLimits{}, k_content_type};
};

TEST_F(ExportHttp, ServesThePublishedBufferWithTheTextFormatContentType) {
    ASSERT_GT(m_server.port(), 0);
    EXPECT_EQ(m_server.url(), "http://127.0.0.1:" + std::to_string(m_server.port()) + "/metrics");
    m_server.publish("gua_x 1\n");
    auto r = http_get(m_server.port(), "/metrics");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "gua_x 1\n");
    EXPECT_NE(r.headers.find("Content-Type: text/plain; version=0.0.4; charset=utf-8"),
              std::string::npos)
        << r.headers;
    m_server.publish("gua_x 2\n");
    EXPECT_EQ(http_get(m_server.port(), "/metrics").body, "gua_x 2\n");
}

TEST_F(ExportHttp, RootLinksToMetricsAndOtherPathsAre404) {
    const auto root = http_get(m_server.port(), "/");
    EXPECT_EQ(root.status, 200);
    EXPECT_NE(root.body.find("href=\"/metrics\""), std::string::npos);
    EXPECT_EQ(http_get(m_server.port(), "/metrics/x").status, 404);
    EXPECT_EQ(http_get(m_server.port(), "/favicon.ico").status, 404);
}

TEST_F(ExportHttp, OnlyGetAndHead) {
    m_server.publish("gua_x 1\n");
    const auto head = http_get(m_server.port(), "/metrics", "HEAD");
    EXPECT_EQ(head.status, 200);
    EXPECT_EQ(head.body, "");
    const auto post =
        http_raw(m_server.port(), "POST /metrics HTTP/1.1\r\nHost: x\r\n"
                                  "Content-Length: 3\r\nConnection: close\r\n\r\nabc");
    EXPECT_EQ(post.status, 405);
    EXPECT_NE(post.headers.find("Allow: GET, HEAD"), std::string::npos) << post.headers;
    EXPECT_EQ(http_get(m_server.port(), "/metrics", "DELETE").status, 405);
}

TEST_F(ExportHttp, OversizedHeadersAreRefused) {
    const std::string big(64 * 1024, 'a');
    const auto r = http_raw(m_server.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + big +
                                                 "\r\nConnection: close\r\n\r\n");
    EXPECT_TRUE(r.status == 431 || r.status == 0) << r.status;
    EXPECT_EQ(http_get(m_server.port(), "/metrics").status, 200) << "still serving";
}

TEST_F(ExportHttp, ScrapesDuringPublishesSeeWholeBuffers) {
    m_server.publish(std::string(10000, 'z') + "\n");
    std::atomic<bool> stop{false};
    std::thread writer([&] {
        for (int i = 0; !stop.load(); ++i) {
            m_server.publish(std::string(10000 + i % 7, static_cast<char>('a' + i % 26)) + "\n");
        }
    });
    for (int i = 0; i < 50; ++i) {
        const auto r = http_get(m_server.port(), "/metrics");
        ASSERT_EQ(r.status, 200);
        ASSERT_GE(r.body.size(), 10001u);
        EXPECT_EQ(r.body.find_first_not_of(r.body.front()), r.body.size() - 1) << "torn buffer";
    }
    stop = true;
    writer.join();
}

TEST(ExportHttpBind, BusyPortIsAConflict) {
    HttpServer first(ListenAddress{"127.0.0.1", 0}, HttpLimits{}, k_content_type);
    try {
        HttpServer second(ListenAddress{"127.0.0.1", first.port()}, HttpLimits{}, k_content_type);
        ADD_FAILURE() << "bound twice";
    } catch (const Fatal& e) {
        EXPECT_EQ(e.code(), ExitCode::conflict);
        EXPECT_NE(std::string(e.what()).find("Address already in use"), std::string::npos)
            << e.what();
    }
}

} // namespace
} // namespace gua::exporter
