// SPDX-License-Identifier: Apache-2.0
// --web-config: the exporter-toolkit YAML, and the endpoint it secures (TLS from a CA made here
// with openssl, client certificates, basic auth, metrics-only) as curl sees it.
#include "core/fatal.hpp"
#include "export/exposition.hpp"
#include "export/http_server.hpp"
#include "export/web_config.hpp"
#include "fleet/prometheus_server.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace gua::exporter {
namespace web_config_test { // named after the file: unique in a unity batch

// bcrypt of "s3cret" (cost 5), made with Python's crypt module, not with gua.
constexpr const char* k_hash = "$2y$05$abcdefghijklmnopqrstuuLK7U1u6pVRmL7L1BBM2aS35PSZnDXlK";

void write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
}

void openssl(const std::vector<std::string>& args) {
    const test::RunResult r = test::run("/usr/bin/openssl", args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate signed by it, and a client
/// certificate of another CA, in `dir`.
void make_pki(const test::TempDir& dir) {
    const std::string cnf = dir.file("openssl.cnf");
    write(cnf, "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = unused\n"
               "[ca]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign\n"
               "[server]\nbasicConstraints = CA:FALSE\nsubjectAltName = IP:127.0.0.1\n"
               "extendedKeyUsage = serverAuth\n"
               "[client]\nbasicConstraints = CA:FALSE\nextendedKeyUsage = clientAuth\n");
    const std::vector<std::string> ec{"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                      "-nodes"};
    const auto ca = [&](const std::string& name) {
        std::vector<std::string> a{"req", "-x509", "-new"};
        a.insert(a.end(), ec.begin(), ec.end());
        a.insert(a.end(),
                 {"-keyout", dir.file(name + ".key"), "-out", dir.file(name + ".pem"), "-days", "2",
                  "-config", cnf, "-extensions", "ca", "-subj", "/CN=" + name});
        openssl(a);
    };
    const auto leaf = [&](const std::string& name, const std::string& issuer,
                          const std::string& ext) {
        std::vector<std::string> a{"req", "-new"};
        a.insert(a.end(), ec.begin(), ec.end());
        a.insert(a.end(), {"-keyout", dir.file(name + ".key"), "-out", dir.file(name + ".csr"),
                           "-config", cnf, "-subj", "/CN=" + name});
        openssl(a);
        openssl({"x509", "-req", "-in", dir.file(name + ".csr"), "-CA", dir.file(issuer + ".pem"),
                 "-CAkey", dir.file(issuer + ".key"), "-CAcreateserial", "-out",
                 dir.file(name + ".pem"), "-days", "2", "-extfile", cnf, "-extensions", ext});
    };
    ca("ca");
    ca("other-ca");
    leaf("server", "ca", "server");
    leaf("client", "ca", "client");
    leaf("stranger", "other-ca", "client");
}

/// curl's answer: the HTTP status ("000" when no response came) and the body.
struct Answer {
    int exit_code = 0;
    std::string status;
    std::string body;
};

Answer curl(const std::string& url, std::vector<std::string> options) {
    options.insert(options.begin(), {"-sS", "--max-time", "10", "-w", "\n%{http_code}"});
    options.push_back(url);
    const test::RunResult r = test::run("/usr/bin/curl", options);
    const std::size_t nl = r.out.rfind('\n');
    Answer a;
    a.exit_code = r.exit_code;
    a.status = nl == std::string::npos ? r.out : r.out.substr(nl + 1);
    a.body = nl == std::string::npos ? "" : r.out.substr(0, nl);
    return a;
}

WebConfig load(const test::TempDir& dir, const std::string& yaml) {
    write(dir.file("web.yml"), yaml);
    return load_web_config(dir.file("web.yml"));
}

/// The Fatal message and code of loading `yaml`.
std::pair<std::string, ExitCode> failure(const test::TempDir& dir, const std::string& yaml) {
    try {
        load(dir, yaml);
    } catch (const Fatal& e) {
        return {e.what(), e.code()};
    }
    return {"loaded", ExitCode::ok};
}

class WebConfigTls : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        s_dir = new test::TempDir;
        make_pki(*s_dir);
    }
    static void TearDownTestSuite() {
        delete s_dir;
        s_dir = nullptr;
    }
    /// A server on a free loopback port secured by `yaml`, serving "gua_x 1" and a page at /report.
    std::unique_ptr<HttpServer> serve(const std::string& yaml) {
        PageRoutes pages;
        pages.paths = {"/report"};
        pages.handler = [](std::string_view, const Query&, const std::atomic<bool>&) {
            return Page{200, "text/plain", "alice used 3 GPU-hours\n"};
        };
        auto server = std::make_unique<HttpServer>(ListenAddress{"127.0.0.1", 0}, HttpLimits{},
                                                   k_content_type, pages, load(*s_dir, yaml));
        server->publish("gua_x 1\n");
        return server;
    }
    std::string ca() const { return s_dir->file("ca.pem"); }
    std::string tls_yaml() const {
        return "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n";
    }
    static test::TempDir* s_dir;
};
test::TempDir* WebConfigTls::s_dir = nullptr;

TEST_F(WebConfigTls, CurlWithTheCaGetsMetricsAndPlainHttpIsRefused) {
    const auto server = serve(tls_yaml());
    const std::string url = server->url();
    EXPECT_EQ(url.rfind("https://127.0.0.1:", 0), 0U) << url;
    const Answer ok = curl(url, {"--cacert", ca()});
    EXPECT_EQ(ok.status, "200");
    EXPECT_EQ(ok.body, "gua_x 1\n");
    const Answer unknown_ca = curl(url, {}); // the system's CAs do not know ours
    EXPECT_NE(unknown_ca.exit_code, 0);
    EXPECT_EQ(unknown_ca.status, "000");
    const Answer plain =
        curl("http://127.0.0.1:" + std::to_string(server->port()) + "/metrics", {});
    EXPECT_NE(plain.exit_code, 0);
    EXPECT_EQ(plain.status, "000");
}

TEST_F(WebConfigTls, BasicAuthRefusesMissingAndWrongCredentials) {
    const auto server = serve(tls_yaml() + "basic_auth_users:\n  prometheus: '" + k_hash + "'\n");
    const std::string url = server->url();
    EXPECT_EQ(curl(url, {"--cacert", ca()}).status, "401");
    EXPECT_EQ(curl(url, {"--cacert", ca(), "-u", "prometheus:wrong"}).status, "401");
    EXPECT_EQ(curl(url, {"--cacert", ca(), "-u", "nobody:s3cret"}).status, "401");
    const test::RunResult challenge =
        test::run("/usr/bin/curl", {"-sS", "-D", "-", "-o", "/dev/null", "--cacert", ca(), url});
    EXPECT_NE(challenge.out.find("WWW-Authenticate: Basic realm=\"gua\""), std::string::npos)
        << challenge.out;
    const Answer ok = curl(url, {"--cacert", ca(), "-u", "prometheus:s3cret"});
    EXPECT_EQ(ok.status, "200");
    EXPECT_EQ(ok.body, "gua_x 1\n");
    EXPECT_EQ(curl(server->url("/report"), {"--cacert", ca(), "-u", "prometheus:s3cret"}).body,
              "alice used 3 GPU-hours\n");
}

TEST_F(WebConfigTls, RequireAndVerifyClientCertWantsACertificateOfTheClientCa) {
    const auto server = serve(tls_yaml() + "  client_ca_file: ca.pem\n"
                                           "  client_auth_type: RequireAndVerifyClientCert\n");
    const std::string url = server->url();
    const Answer none = curl(url, {"--cacert", ca()});
    EXPECT_NE(none.status, "200");
    const Answer stranger = curl(url, {"--cacert", ca(), "--cert", s_dir->file("stranger.pem"),
                                       "--key", s_dir->file("stranger.key")});
    EXPECT_NE(stranger.status, "200");
    const Answer ok = curl(url, {"--cacert", ca(), "--cert", s_dir->file("client.pem"), "--key",
                                 s_dir->file("client.key")});
    EXPECT_EQ(ok.status, "200");
    EXPECT_EQ(ok.body, "gua_x 1\n");
}

TEST_F(WebConfigTls, MetricsOnlyHidesThePagesThatNamePeople) {
    const auto server = serve(tls_yaml() + "gua:\n  pages: metrics-only\n");
    EXPECT_EQ(curl(server->url(), {"--cacert", ca()}).status, "200");
    for (const char* path : {"/report", "/", "/report.json"}) {
        const Answer a = curl(server->url(path), {"--cacert", ca()});
        EXPECT_EQ(a.status, "404") << path;
        EXPECT_EQ(a.body.find("alice"), std::string::npos) << path;
    }
}

TEST_F(WebConfigTls, MinVersionTls13RefusesTls12Clients) {
    const auto server = serve(tls_yaml() + "  min_version: TLS13\n");
    EXPECT_EQ(curl(server->url(), {"--cacert", ca(), "--tls-max", "1.2"}).status, "000");
    EXPECT_EQ(curl(server->url(), {"--cacert", ca(), "--tlsv1.3"}).status, "200");
}

TEST_F(WebConfigTls, PrometheusScrapesThroughTlsAndBasicAuth) {
    auto server = serve(tls_yaml() + "basic_auth_users:\n  prometheus: '" + k_hash + "'\n");
    server->publish("# TYPE gua_x gauge\ngua_x 7\n");
    const std::string target = "127.0.0.1:" + std::to_string(server->port());
    // The scrape_config of docs/metrics.md.
    const std::string settings = "    scheme: https\n"
                                 "    tls_config:\n      ca_file: " +
                                 ca() +
                                 "\n"
                                 "    basic_auth:\n      username: prometheus\n"
                                 "      password: s3cret\n";
    fleet_testing::PrometheusServer prom(s_dir->file("prom"), {target}, "gua", settings);
    ASSERT_TRUE(prom.wait_ready(std::chrono::seconds(30)));
    EXPECT_TRUE(prom.wait_value("up{job=\"gua\"}", 1, std::chrono::seconds(30)));
    EXPECT_TRUE(prom.wait_value("gua_x", 7, std::chrono::seconds(30)));
    EXPECT_EQ(prom.value("gua_x"), 7);
}

TEST_F(WebConfigTls, PrometheusWithAWrongPasswordIsRefused) {
    auto server = serve(tls_yaml() + "basic_auth_users:\n  prometheus: '" + k_hash + "'\n");
    server->publish("# TYPE gua_x gauge\ngua_x 7\n");
    const std::string target = "127.0.0.1:" + std::to_string(server->port());
    const std::string settings = "    scheme: https\n    tls_config:\n      ca_file: " + ca() +
                                 "\n    basic_auth:\n      username: prometheus\n"
                                 "      password: wrong\n";
    fleet_testing::PrometheusServer prom(s_dir->file("prom-wrong"), {target}, "gua", settings);
    ASSERT_TRUE(prom.wait_ready(std::chrono::seconds(30)));
    // A failed scrape still records up = 0; then gua_x must be absent.
    ASSERT_TRUE(fleet_testing::wait_for(
        [&] { return prom.value("count(up{job=\"gua\"} == 0)") == 1; }, std::chrono::seconds(30)));
    EXPECT_EQ(prom.value("gua_x"), -1);
}

TEST(WebConfigCli, BadWebConfigStopsTheDaemonBeforeItStarts) {
    const test::TempDir dir;
    write(dir.file("bad.yml"), "tls_server_config:\n  prefer_server_cipher_suites: true\n");
    const test::RunResult unknown =
        test::run_gua({"daemon", "--db", dir.file("g.db"), "--listen", "127.0.0.1:0",
                       "--web-config", dir.file("bad.yml")});
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_NE(unknown.err.find("tls_server_config.prefer_server_cipher_suites"), std::string::npos)
        << unknown.err;
    write(dir.file("gone.yml"),
          "tls_server_config:\n  cert_file: gone.pem\n  key_file: gone.key\n");
    const test::RunResult gone =
        test::run_gua({"daemon", "--db", dir.file("g.db"), "--listen", "127.0.0.1:0",
                       "--web-config", dir.file("gone.yml")});
    EXPECT_NE(gone.exit_code, 0);
    EXPECT_NE(gone.err.find("gone.pem"), std::string::npos) << gone.err;
    const test::RunResult no_listen =
        test::run_gua({"daemon", "--db", dir.file("g.db"), "--web-config", dir.file("bad.yml")});
    EXPECT_EQ(no_listen.exit_code, 2);
    EXPECT_NE(no_listen.err.find("--listen"), std::string::npos) << no_listen.err;
}

TEST(WebConfig, BcryptPasswordsMatchTheirHash) {
    // The OpenBSD bcrypt test vector ("U*U").
    EXPECT_TRUE(
        password_matches("$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW", "U*U"));
    EXPECT_FALSE(
        password_matches("$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW", "U*V"));
    EXPECT_TRUE(password_matches(k_hash, "s3cret"));
    EXPECT_FALSE(password_matches(k_hash, ""));
    EXPECT_FALSE(password_matches("$2y$05$short", "s3cret"));
}

TEST(WebConfig, BadKeysAndFilesAreOneClearError) {
    const test::TempDir dir;
    const auto [unknown, c1] = failure(dir, "tls_server_config:\n  cipher_suites: [x]\n");
    EXPECT_EQ(c1, ExitCode::usage);
    EXPECT_NE(unknown.find("tls_server_config.cipher_suites"), std::string::npos) << unknown;
    const auto [top, c2] = failure(dir, "http_server_config:\n  http2: false\n");
    EXPECT_EQ(c2, ExitCode::usage);
    EXPECT_NE(top.find("http_server_config"), std::string::npos) << top;
    const auto [auth, c3] = failure(dir, "tls_server_config:\n  cert_file: a\n  key_file: b\n"
                                         "  client_auth_type: RequestClientCert\n");
    EXPECT_NE(auth.find("cannot read"), std::string::npos) << auth; // files first
    const auto [missing, c4] = failure(dir, "tls_server_config:\n  cert_file: /nonexistent/c.pem\n"
                                            "  key_file: /nonexistent/k.pem\n");
    EXPECT_EQ(c4, ExitCode::failure);
    EXPECT_NE(missing.find("/nonexistent/c.pem"), std::string::npos) << missing;
    const auto [plain, c5] = failure(dir, "basic_auth_users:\n  bob: hunter2\n");
    EXPECT_EQ(c5, ExitCode::usage);
    EXPECT_NE(plain.find("basic_auth_users.bob"), std::string::npos) << plain;
    EXPECT_EQ(plain.find("hunter2"), std::string::npos) << "a secret was printed: " << plain;
    const auto [pages, c6] = failure(dir, "gua:\n  pages: some\n");
    EXPECT_NE(pages.find("gua.pages"), std::string::npos) << pages;
    const auto [yaml, c7] = failure(dir, "tls_server_config: [\n");
    EXPECT_EQ(c7, ExitCode::usage);
    EXPECT_NE(yaml.find("web.yml"), std::string::npos) << yaml;
    EXPECT_FALSE(load(dir, "").tls());
}

TEST_F(WebConfigTls, UnsupportedClientAuthTypeIsNamed) {
    const auto [msg, code] =
        failure(*s_dir, tls_yaml() + "  client_auth_type: RequestClientCert\n");
    EXPECT_EQ(code, ExitCode::usage);
    EXPECT_NE(msg.find("client_auth_type"), std::string::npos) << msg;
    EXPECT_NE(msg.find("RequestClientCert"), std::string::npos) << msg;
    const auto [mismatch, c2] = failure(*s_dir, "tls_server_config:\n  cert_file: server.pem\n"
                                                "  key_file: client.key\n");
    EXPECT_EQ(c2, ExitCode::ok); // loading reads the files; the server start checks the pair
    EXPECT_THROW(serve("tls_server_config:\n  cert_file: server.pem\n  key_file: client.key\n"),
                 Fatal);
}

} // namespace web_config_test
} // namespace gua::exporter
