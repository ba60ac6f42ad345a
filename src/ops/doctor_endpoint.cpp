// SPDX-License-Identifier: Apache-2.0
// Doctor: is the HTTP endpoint of [daemon] listen reachable beyond loopback without TLS or
// authentication ([daemon] web_config)?
#include "ops/doctor.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gua::ops {

namespace {

/// The host of a listen address ("PORT", ":PORT", "HOST:PORT", "[IPv6]:PORT"); "" for none.
std::string listen_host(const std::string& listen) {
    const std::size_t colon = listen.rfind(':');
    if (colon == std::string::npos) {
        return "";
    }
    std::string host = listen.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    return host;
}

bool is_loopback(const std::string& host) {
    return host.empty() || host == "localhost" || host.starts_with("127.") || host == "::1";
}

/// Whether the web config at `path` turns on TLS or basic auth (its top-level keys; the daemon
/// checks the rest when it starts).
bool secures(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    std::istringstream lines(text.str());
    for (std::string line; std::getline(lines, line);) {
        if (line.starts_with("tls_server_config:") || line.starts_with("basic_auth_users:")) {
            return true;
        }
    }
    return false;
}

} // namespace

std::optional<Finding> check_endpoint(const DoctorInputs& in) {
    if (!in.config || in.config.value().listen.value_or("").empty()) {
        return std::nullopt;
    }
    const config::Config& c = in.config.value();
    const std::string listen = *c.listen;
    Finding f{"endpoint", "HTTP endpoint", Severity::ok, "", ""};
    std::string web = c.web_config.value_or("");
    if (!web.empty() && !web.starts_with('/') && !c.path.empty()) {
        web = (std::filesystem::path(c.path).parent_path() / web).string();
    }
    const bool secured = !web.empty() && secures(web);
    if (is_loopback(listen_host(listen))) {
        f.message =
            fmt::format("{} is loopback only{}", listen, secured ? ", with TLS or auth" : "");
        return f;
    }
    if (secured) {
        f.message = fmt::format("{} is reachable beyond loopback, secured by {}", listen, web);
        return f;
    }
    f.severity = Severity::warn;
    f.message = fmt::format("{} is reachable beyond loopback without TLS or authentication{}",
                            listen, web.empty() ? "" : fmt::format(" ({} sets neither)", web));
    f.fix = "set [daemon] web_config to a web config with tls_server_config and "
            "basic_auth_users (docs/metrics.md), or listen on 127.0.0.1";
    return f;
}

} // namespace gua::ops
