// SPDX-License-Identifier: Apache-2.0
// --web-config: the Prometheus exporter-toolkit YAML (TLS, client certificates, basic auth) that
// secures the daemon's HTTP endpoint, plus gua's own key limiting the pages served.
#pragma once

#include <map>
#include <string>

namespace gua::exporter {

/// How clients must authenticate with a certificate (tls_server_config.client_auth_type).
enum class ClientAuth { none, require_and_verify };

/// A loaded web config: the PEM texts, never their paths, so a bad file fails at start.
struct WebConfig {
    std::string cert_pem;      ///< tls_server_config.cert_file; empty: plain HTTP
    std::string key_pem;       ///< tls_server_config.key_file
    std::string client_ca_pem; ///< tls_server_config.client_ca_file
    ClientAuth client_auth = ClientAuth::none;
    std::string priorities;                   ///< GnuTLS priority string from min_version
    std::map<std::string, std::string> users; ///< basic_auth_users: name → bcrypt hash
    bool metrics_only = false;                ///< gua.pages: metrics-only

    bool tls() const { return !cert_pem.empty(); }
    bool basic_auth() const { return !users.empty(); }
};

/// Reads and checks the YAML file `path`; relative certificate paths are taken from its folder.
/// Throws Fatal (usage) naming the file and the key for a bad key or value, and Fatal (failure)
/// for an unreadable certificate or key. Never prints a secret.
WebConfig load_web_config(const std::string& path);

/// Whether `password` matches the bcrypt `hash` ($2a$, $2b$, $2y$), compared in constant time.
bool password_matches(const std::string& hash, const std::string& password);

} // namespace gua::exporter
