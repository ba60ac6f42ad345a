// SPDX-License-Identifier: Apache-2.0
// Parses the exporter-toolkit web config (yaml-cpp) and checks basic-auth passwords against their
// bcrypt hashes with libxcrypt.
#include "export/web_config.hpp"

#include "core/fatal.hpp"

#include <fmt/format.h>

#include <crypt.h>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <string_view>
#include <yaml-cpp/yaml.h>

namespace gua::exporter {

namespace {

[[noreturn]] void bad(const std::string& path, const std::string& key, const std::string& what) {
    throw Fatal(fmt::format("{}: {}: {}", path, key, what), ExitCode::usage);
}

void check_map(const std::string& path, const YAML::Node& node, const std::string& where,
               std::initializer_list<std::string_view> known) {
    if (!node.IsMap()) {
        bad(path, where, "expected a mapping");
    }
    for (const auto& entry : node) {
        const std::string key = entry.first.as<std::string>();
        bool found = false;
        for (std::string_view k : known) {
            found = found || k == key;
        }
        if (!found) {
            bad(path, where.empty() ? key : where + "." + key, "unknown or unsupported key");
        }
    }
}

std::string scalar(const std::string& path, const YAML::Node& node, const std::string& key) {
    if (!node.IsScalar() || node.Scalar().empty()) {
        bad(path, key, "expected a non-empty string");
    }
    return node.Scalar();
}

/// The PEM file `file` (relative to the config's folder) or Fatal naming it.
std::string read_pem(const std::string& path, const std::string& key, const std::string& file) {
    std::filesystem::path p(file);
    if (p.is_relative()) {
        p = std::filesystem::path(path).parent_path() / p;
    }
    std::ifstream in(p, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in || text.str().find("-----BEGIN") == std::string::npos) {
        throw Fatal(fmt::format("{}: {}: cannot read a PEM file at {}", path, key, p.string()));
    }
    return text.str();
}

void parse_tls(const std::string& path, const YAML::Node& tls, WebConfig& out) {
    const std::string w = "tls_server_config";
    check_map(path, tls, w,
              {"cert_file", "key_file", "client_ca_file", "client_auth_type", "min_version"});
    if (!tls["cert_file"] || !tls["key_file"]) {
        bad(path, w, "both cert_file and key_file are required");
    }
    out.cert_pem =
        read_pem(path, w + ".cert_file", scalar(path, tls["cert_file"], w + ".cert_file"));
    out.key_pem = read_pem(path, w + ".key_file", scalar(path, tls["key_file"], w + ".key_file"));
    if (tls["client_ca_file"]) {
        const std::string key = w + ".client_ca_file";
        out.client_ca_pem = read_pem(path, key, scalar(path, tls["client_ca_file"], key));
    }
    if (tls["client_auth_type"]) {
        const std::string key = w + ".client_auth_type";
        const std::string v = scalar(path, tls["client_auth_type"], key);
        if (v == "RequireAndVerifyClientCert") {
            out.client_auth = ClientAuth::require_and_verify;
        } else if (v != "NoClientCert") {
            bad(path, key,
                fmt::format("\"{}\" is not supported; use NoClientCert or "
                            "RequireAndVerifyClientCert",
                            v));
        }
    }
    if (out.client_auth == ClientAuth::require_and_verify && out.client_ca_pem.empty()) {
        bad(path, w + ".client_ca_file", "RequireAndVerifyClientCert needs client_ca_file");
    }
    if (out.client_auth == ClientAuth::none && !out.client_ca_pem.empty()) {
        bad(path, w + ".client_auth_type", "client_ca_file is set: use RequireAndVerifyClientCert");
    }
    std::string min = "TLS12";
    if (tls["min_version"]) {
        min = scalar(path, tls["min_version"], w + ".min_version");
    }
    if (min == "TLS12") {
        out.priorities = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";
    } else if (min == "TLS13") {
        out.priorities = "NORMAL:-VERS-ALL:+VERS-TLS1.3";
    } else {
        bad(path, w + ".min_version", fmt::format("\"{}\": expected TLS12 or TLS13", min));
    }
}

void parse_users(const std::string& path, const YAML::Node& users, WebConfig& out) {
    if (!users.IsMap()) {
        bad(path, "basic_auth_users", "expected a mapping of user names to bcrypt hashes");
    }
    for (const auto& entry : users) {
        const std::string name = entry.first.as<std::string>();
        const std::string key = "basic_auth_users." + name;
        const std::string hash = scalar(path, entry.second, key);
        const std::string_view h = hash;
        if (name.empty() || name.find(':') != std::string::npos) {
            bad(path, key, "a user name must be non-empty and without ':'");
        }
        if (!(h.starts_with("$2a$") || h.starts_with("$2b$") || h.starts_with("$2y$"))) {
            bad(path, key, "expected a bcrypt hash ($2a$, $2b$ or $2y$)");
        }
        out.users[name] = hash;
    }
}

void parse_gua(const std::string& path, const YAML::Node& gua, WebConfig& out) {
    check_map(path, gua, "gua", {"pages"});
    if (gua["pages"]) {
        const std::string v = scalar(path, gua["pages"], "gua.pages");
        if (v == "metrics-only") {
            out.metrics_only = true;
        } else if (v != "all") {
            bad(path, "gua.pages", fmt::format("\"{}\": expected all or metrics-only", v));
        }
    }
}

} // namespace

WebConfig load_web_config(const std::string& path) {
    YAML::Node root;
    try {
        root = YAML::LoadFile(path);
    } catch (const YAML::BadFile&) {
        throw Fatal(fmt::format("--web-config {}: cannot read the file", path), ExitCode::usage);
    } catch (const YAML::Exception& e) {
        throw Fatal(fmt::format("{}:{}: not valid YAML: {}", path, e.mark.line + 1, e.msg),
                    ExitCode::usage);
    }
    WebConfig out;
    if (root.IsNull()) {
        return out; // an empty file: no TLS, no authentication, as with exporter-toolkit
    }
    try {
        check_map(path, root, "", {"tls_server_config", "basic_auth_users", "gua"});
        if (root["tls_server_config"]) {
            parse_tls(path, root["tls_server_config"], out);
        }
        if (root["basic_auth_users"]) {
            parse_users(path, root["basic_auth_users"], out);
        }
        if (root["gua"]) {
            parse_gua(path, root["gua"], out);
        }
    } catch (const YAML::Exception& e) {
        throw Fatal(fmt::format("{}:{}: {}", path, e.mark.line + 1, e.msg), ExitCode::usage);
    }
    return out;
}

bool password_matches(const std::string& hash, const std::string& password) {
    auto data = std::make_unique<crypt_data>();
    const char* computed = crypt_rn(password.c_str(), hash.c_str(), data.get(), sizeof *data);
    if (computed == nullptr || computed[0] == '*') {
        return false;
    }
    const std::string_view c = computed;
    if (c.size() != hash.size()) {
        return false;
    }
    unsigned char diff = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
        diff |= static_cast<unsigned char>(c[i] ^ hash[i]);
    }
    return diff == 0;
}

} // namespace gua::exporter
