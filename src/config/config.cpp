// gua.toml parsing with toml++: unknown keys and wrong types are errors with file and line.
#include "config/config.hpp"

#include "config/policy_section.hpp"
#include "core/duration.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace gua::config {

namespace {

Error at(const std::string& path, const toml::node& node, const std::string& key,
         const std::string& what) {
    return Error{fmt::format("{}:{}: {}: {}", path, node.source().begin.line, key, what)};
}

Result<void> check_keys(const std::string& path, const toml::table& table, const std::string& name,
                        const std::set<std::string>& allowed) {
    for (const auto& [key, node] : table) {
        if (!allowed.contains(std::string(key.str()))) {
            const std::string full =
                name.empty() ? std::string(key.str()) : name + "." + std::string(key.str());
            return at(path, node, full, "unknown key");
        }
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
    if (auto r =
            check_keys(path, root, "", {"thresholds", "daemon", "pricing", "report", "policy"});
        !r) {
        return r.error();
    }
    if (const toml::table* t = root["thresholds"].as_table()) {
        if (auto r = check_keys(path, *t, "thresholds",
                                {"active_util_pct", "held_mib", "graphics_is_holder"});
            !r) {
            return r.error();
        }
        if (const toml::node* n = t->get("active_util_pct")) {
            const std::optional<double> v = n->value<double>();
            if (!v || *v <= 0 || *v > 100) {
                return at(path, *n, "thresholds.active_util_pct",
                          "expected a number greater than 0 and at most 100");
            }
            c.thresholds.active_util_pct = *v;
        }
        if (const toml::node* n = t->get("held_mib")) {
            const std::optional<std::int64_t> v = n->value<std::int64_t>();
            if (!v || *v < 0) {
                return at(path, *n, "thresholds.held_mib", "expected a whole number of MiB >= 0");
            }
            c.thresholds.held_mib = *v;
        }
        if (const toml::node* n = t->get("graphics_is_holder")) {
            const std::optional<bool> v = n->value<bool>();
            if (!v) {
                return at(path, *n, "thresholds.graphics_is_holder", "expected true or false");
            }
            c.thresholds.graphics_is_holder = *v;
        }
    }
    if (const toml::table* t = root["daemon"].as_table()) {
        if (auto r = check_keys(path, *t, "daemon", {"interval", "db"}); !r) {
            return r.error();
        }
        if (const toml::node* n = t->get("interval")) {
            const std::optional<std::string> v = n->value<std::string>();
            const Result<DurationUs> d = v ? parse_duration(*v) : Result<DurationUs>(Error{"x"});
            if (!d) {
                return at(path, *n, "daemon.interval", "expected a duration such as \"30s\"");
            }
            c.interval_us = d.value();
        }
        if (const toml::node* n = t->get("db")) {
            const std::optional<std::string> v = n->value<std::string>();
            if (!v || v->empty()) {
                return at(path, *n, "daemon.db", "expected a file path");
            }
            c.db = *v;
        }
    }
    if (const toml::table* t = root["policy"].as_table()) {
        Result<policy::PolicyConfig> p = parse_policy_section(*t, path);
        if (!p) {
            return p.error();
        }
        c.policy = std::move(p).value();
    }
    return c;
}

Result<Config> load_config(const std::string& path) {
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
