// SPDX-License-Identifier: Apache-2.0
// The delivery tests' real servers on loopback: an SMTP server (aiosmtpd, STARTTLS + AUTH, its
// certificate made here with openssl) and an HTTP receiver recording webhook posts. Both are
// started by the test and killed with it. Header-only: tests/CMakeLists.txt compiles only
// *_test.cpp outside support/.
#pragma once

#include "support/daemon_process.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace gua::notify_test {

using namespace std::chrono_literals;

inline const std::string k_python = "/usr/bin/python3";
inline const std::string k_scripts = std::string(GUA_SOURCE_DIR) + "/tests/notify/";

/// True when Debian's python3-aiosmtpd is installed (scripts/install-deps.sh --test).
inline bool have_aiosmtpd() {
    return test::run(k_python, {"-c", "import aiosmtpd"}).exit_code == 0;
}

inline void write_file(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
}

/// A CA (ca.pem) and a server certificate for 127.0.0.1 (server.pem, server.key) in `dir`.
inline void make_server_certificate(const test::TempDir& dir) {
    write_file(dir.file("openssl.cnf"),
               "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = unused\n"
               "[ca]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign\n"
               "[server]\nbasicConstraints = CA:FALSE\nsubjectAltName = IP:127.0.0.1\n"
               "extendedKeyUsage = serverAuth\n");
    const std::vector<std::vector<std::string>> steps{
        {"req",
         "-x509",
         "-new",
         "-newkey",
         "ec",
         "-pkeyopt",
         "ec_paramgen_curve:prime256v1",
         "-nodes",
         "-keyout",
         dir.file("ca.key"),
         "-out",
         dir.file("ca.pem"),
         "-days",
         "2",
         "-config",
         dir.file("openssl.cnf"),
         "-extensions",
         "ca",
         "-subj",
         "/CN=gua-test-ca"},
        {"req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", dir.file("server.key"), "-out", dir.file("server.csr"), "-config",
         dir.file("openssl.cnf"), "-subj", "/CN=127.0.0.1"},
        {"x509", "-req", "-in", dir.file("server.csr"), "-CA", dir.file("ca.pem"), "-CAkey",
         dir.file("ca.key"), "-CAcreateserial", "-out", dir.file("server.pem"), "-days", "2",
         "-extfile", dir.file("openssl.cnf"), "-extensions", "server"}};
    for (const auto& args : steps) {
        const test::RunResult r = test::run("/usr/bin/openssl", args);
        if (r.exit_code != 0) {
            throw std::runtime_error("openssl failed: " + r.err);
        }
    }
}

/// A server process and the port it listens on (0 when it did not start).
struct Server {
    std::unique_ptr<test::BackgroundProcess> process;
    int port = 0;
};

/// Starts `script` with `args`; waits for its "ready PORT" line.
inline Server start_server(const test::TempDir& dir, const std::string& name,
                           const std::string& script, const std::vector<std::string>& args) {
    std::vector<std::string> a{k_scripts + script};
    a.insert(a.end(), args.begin(), args.end());
    Server s;
    s.process = std::make_unique<test::BackgroundProcess>(
        k_python, a, std::map<std::string, std::string>{}, dir.path(), name);
    if (s.process->wait_for("ready ", 20s, 1, dir.file(name + ".out"))) {
        std::istringstream in(s.process->out());
        std::string word;
        in >> word >> s.port;
    }
    return s;
}

/// The aiosmtpd server: STARTTLS with server.pem, AUTH as `user`/`password`; mails in `mail_dir`.
inline Server start_smtp(const test::TempDir& dir, const std::string& mail_dir,
                         const std::string& user, const std::string& password) {
    make_server_certificate(dir);
    return start_server(dir, "smtp", "smtp_server.py",
                        {"--dir", mail_dir, "--cert", dir.file("server.pem"), "--key",
                         dir.file("server.key"), "--user", user, "--password", password});
}

/// The HTTP receiver: 500 to the first `fail` posts after the first `hang` (never answered).
inline Server start_receiver(const test::TempDir& dir, int fail = 0, int hang = 0) {
    return start_server(
        dir, "receiver", "http_receiver.py",
        {"--dir", dir.path(), "--fail", std::to_string(fail), "--hang", std::to_string(hang)});
}

/// The posts the receiver recorded so far: {t, path, content_type, body}.
inline std::vector<nlohmann::json> received(const test::TempDir& dir) {
    std::vector<nlohmann::json> out;
    std::ifstream in(dir.file("requests.jsonl"));
    for (std::string line; std::getline(in, line);) {
        if (!line.empty()) {
            out.push_back(nlohmann::json::parse(line));
        }
    }
    return out;
}

/// Non-empty lines of `text`.
inline std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty()) {
            out.push_back(line);
        }
    }
    return out;
}

} // namespace gua::notify_test
