// SPDX-License-Identifier: Apache-2.0
// gua.toml parsing with toml++: unknown keys and wrong types are errors with file and line.
#include "config/config.hpp"

#include "config/allocations_section.hpp"
#include "config/delivery_section.hpp"
#include "config/digest_section.hpp"
#include "config/policy_section.hpp"
#include "config/sections.hpp"
#include "config/toml_errors.hpp"
#include "core/duration.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gua::config {

namespace {

/// [thresholds] into `out`.
Result<void> parse_thresholds(const std::string& path, const toml::table& t,
                              audit::Thresholds& out) {
    if (auto r = check_keys(path, t, "thresholds",
                            {"active_util_pct", "held_mib", "graphics_is_holder"});
        !r) {
        return r;
    }
    if (const toml::node* n = t.get("active_util_pct")) {
        const std::optional<double> v = n->value<double>();
        if (!v || !(*v > 0 && *v <= 100)) { // NaN fails too
            return at(path, *n, "thresholds.active_util_pct",
                      "expected a number greater than 0 and at most 100");
        }
        out.active_util_pct = *v;
    }
    if (const toml::node* n = t.get("held_mib")) {
        const std::optional<std::int64_t> v = whole_number(*n);
        if (!v || *v < 0) {
            return at(path, *n, "thresholds.held_mib", "expected a whole number of MiB >= 0");
        }
        out.held_mib = *v;
    }
    if (const toml::node* n = t.get("graphics_is_holder")) {
        const std::optional<bool> v = n->value<bool>();
        if (!v) {
            return at(path, *n, "thresholds.graphics_is_holder", "expected true or false");
        }
        out.graphics_is_holder = *v;
    }
    return {};
}

/// [daemon] into `out`.
Result<void> parse_daemon(const std::string& path, const toml::table& t, Config& out) {
    if (auto r =
            check_keys(path, t, "daemon", {"interval", "db", "listen", "web_config", "kernel_log"});
        !r) {
        return r;
    }
    if (const toml::node* n = t.get("interval")) {
        const std::optional<std::string> v = n->value<std::string>();
        const Result<DurationUs> d = v ? parse_duration(*v) : Result<DurationUs>(Error{"x"});
        if (!d) {
            return at(path, *n, "daemon.interval", "expected a duration such as \"30s\"");
        }
        if (d.value() < 100 * k_us_per_ms) {
            return at(path, *n, "daemon.interval",
                      "expected a duration of at least 100ms, such as \"30s\"");
        }
        out.interval_us = d.value();
    }
    if (const toml::node* n = t.get("db")) {
        const std::optional<std::string> v = n->value<std::string>();
        if (!v || v->empty()) {
            return at(path, *n, "daemon.db", "expected a file path");
        }
        out.db = *v;
    }
    if (const toml::node* n = t.get("listen")) {
        const std::optional<std::string> v = n->value<std::string>();
        if (!v) {
            return at(path, *n, "daemon.listen",
                      "expected an address such as \"127.0.0.1:10409\" or \"\" (off)");
        }
        out.listen = *v;
    }
    if (const toml::node* n = t.get("web_config")) {
        const std::optional<std::string> v = n->value<std::string>();
        if (!v || v->empty()) {
            return at(path, *n, "daemon.web_config",
                      "expected the path of an exporter-toolkit web config (YAML)");
        }
        out.web_config = *v;
    }
    if (const toml::node* n = t.get("kernel_log")) {
        const std::optional<std::string> v = n->value<std::string>();
        if (!v) {
            return at(path, *n, "daemon.kernel_log",
                      "expected a path such as \"/dev/kmsg\" or \"\" (off)");
        }
        out.kernel_log = *v;
    }
    return {};
}

} // namespace

Result<Config> parse_config(const std::string& text, const std::string& path) {
    toml::table root;
    try {
        root = toml::parse(text, path);
    } catch (const toml::parse_error& e) {
        return Error{fmt::format("{}:{}: {}", path, e.source().begin.line, e.description())};
    }
    Config c;
    c.path = path;
    if (auto r = check_keys(path, root, "",
                            {"thresholds", "daemon", "pricing", "energy", "health", "report",
                             "teams", "policy", "retention", "allocations", "digest", "mail",
                             "webhook", "delivery"});
        !r) {
        return r.error();
    }
    if (const toml::table* t = root["thresholds"].as_table()) {
        if (auto r = parse_thresholds(path, *t, c.thresholds); !r) {
            return r.error();
        }
    }
    if (const toml::table* t = root["daemon"].as_table()) {
        if (auto r = parse_daemon(path, *t, c); !r) {
            return r.error();
        }
    }
    const auto section = [&](const char* name, auto parse, auto& out) -> Result<void> {
        const toml::node* n = root.get(name);
        if (n == nullptr) {
            return {};
        }
        if (const toml::table* t = n->as_table()) {
            return parse(path, *t, out);
        }
        return at(path, *n, name, "expected a table");
    };
    if (auto r = section("pricing", parse_pricing, c.pricing); !r) {
        return r.error();
    }
    if (auto r = section("energy", parse_energy, c.energy); !r) {
        return r.error();
    }
    if (auto r = section("health", parse_health, c.health); !r) {
        return r.error();
    }
    const auto report = [](const std::string& p, const toml::table& t, Config& cfg) {
        return parse_report(p, t, cfg.grouping, cfg.time_zone);
    };
    if (auto r = section("report", report, c); !r) {
        return r.error();
    }
    if (auto r = section("teams", parse_teams, c.grouping); !r) {
        return r.error();
    }
    if (auto r = section("retention", parse_retention, c.retention); !r) {
        return r.error();
    }
    if (auto r = section("policy", parse_policy, c.policy); !r) {
        return r.error();
    }
    if (auto r = section("allocations", parse_allocations, c.allocations); !r) {
        return r.error();
    }
    if (auto r = section("digest", parse_digest, c.digest); !r) {
        return r.error();
    }
    // [mail], [webhook.NAME], [delivery]: the transports of digests and notifications.
    if (auto r = section("mail", parse_mail, c.delivery); !r) {
        return r.error();
    }
    if (auto r = section("webhook", parse_webhooks, c.delivery); !r) {
        return r.error();
    }
    if (auto r = section("delivery", parse_delivery, c.delivery); !r) {
        return r.error();
    }
    return c;
}

Result<Config> load_config(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        return Error{fmt::format("config file {} is a directory (expected a gua.toml file)", path)};
    }
    std::ifstream in(path);
    if (!in) {
        return Error{fmt::format("cannot read config file {}", path)};
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    return parse_config(buffer.str(), path);
}

std::optional<std::string> find_config_file() {
    std::error_code ec;
    std::string user;
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg == '/') {
        user = std::string(xdg) + "/gua/gua.toml";
    } else if (const char* home = std::getenv("HOME"); home != nullptr) {
        user = std::string(home) + "/.config/gua/gua.toml";
    }
    if (!user.empty() && std::filesystem::exists(user, ec)) {
        return user;
    }
    if (std::filesystem::exists("/etc/gua/gua.toml", ec)) {
        return std::string("/etc/gua/gua.toml");
    }
    return std::nullopt;
}

Result<Config> load_effective_config(const std::string& explicit_path) {
    if (!explicit_path.empty()) {
        return load_config(explicit_path);
    }
    if (const std::optional<std::string> found = find_config_file()) {
        return load_config(*found);
    }
    return Config{};
}

} // namespace gua::config
