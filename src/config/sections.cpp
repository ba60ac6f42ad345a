// SPDX-License-Identifier: Apache-2.0
// [pricing], [report] and [teams] of gua.toml.
#include "config/sections.hpp"

#include "config/toml_errors.hpp"
#include "core/duration.hpp"
#include "core/timezone.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <tuple>
#include <vector>

namespace gua::config {

namespace {

constexpr const char* k_price_error = "expected a price per GPU-hour from 0 to 1000, e.g. 2.50";

Result<std::int64_t> price_at(const std::string& path, const toml::node& node,
                              const std::string& key) {
    const std::optional<double> v = node.is_number() ? node.value<double>() : std::nullopt;
    const std::optional<std::int64_t> micros = v ? audit::to_micros(*v) : std::nullopt;
    if (!micros) {
        return at(path, node, key, k_price_error);
    }
    return *micros;
}

bool is_currency_code(const std::string& s) {
    return s.size() == 3 && std::all_of(s.begin(), s.end(), [](char c) {
               return std::isupper(static_cast<unsigned char>(c)) != 0;
           });
}

} // namespace

Result<void> parse_pricing(const std::string& path, const toml::table& table, audit::Pricing& out) {
    if (auto r =
            check_keys(path, table, "pricing", {"currency", "default", "spot_discount", "models"});
        !r) {
        return r;
    }
    out.configured = true;
    if (const toml::node* n = table.get("currency")) {
        const std::optional<std::string> v = n->value<std::string>();
        if (!v || !is_currency_code(*v)) {
            return at(path, *n, "pricing.currency", "expected an ISO 4217 code such as \"USD\"");
        }
        out.currency = *v;
    }
    if (const toml::node* n = table.get("default")) {
        Result<std::int64_t> price = price_at(path, *n, "pricing.default");
        if (!price) {
            return price.error();
        }
        out.default_micros_per_gpu_hour = price.value();
    }
    if (const toml::node* n = table.get("spot_discount")) {
        const std::optional<double> v = n->is_number() ? n->value<double>() : std::nullopt;
        if (!v || !(*v >= 0 && *v < 1)) {
            return at(path, *n, "pricing.spot_discount",
                      "expected a fraction from 0 up to (not including) 1, e.g. 0.6 for 60 % off");
        }
        out.spot_discount = *v;
    }
    out.models.clear();
    if (const toml::node* n = table.get("models")) {
        const toml::table* models = n->as_table();
        if (models == nullptr) {
            return at(path, *n, "pricing.models",
                      "expected a table of model-name substrings and prices, e.g. \"H100\" = 4.00");
        }
        // toml++ tables are sorted by key; the first match must follow the file's order.
        std::vector<std::tuple<std::uint32_t, std::uint32_t, std::string, const toml::node*>> rows;
        for (const auto& [key, node] : *models) {
            rows.emplace_back(node.source().begin.line, node.source().begin.column,
                              std::string(key.str()), &node);
        }
        std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
            return std::tie(std::get<0>(a), std::get<1>(a)) <
                   std::tie(std::get<0>(b), std::get<1>(b));
        });
        for (const auto& [line, column, key, node] : rows) {
            const std::string full = "pricing.models." + key;
            if (key.empty()) {
                return at(path, *node, full, "expected a non-empty model-name substring");
            }
            Result<std::int64_t> price = price_at(path, *node, full);
            if (!price) {
                return price.error();
            }
            out.models.push_back(audit::ModelPrice{key, price.value()});
        }
    }
    return {};
}

Result<void> parse_energy(const std::string& path, const toml::table& table,
                          audit::EnergyPricing& out) {
    if (auto r = check_keys(path, table, "energy", {"price_per_kwh", "grams_co2_per_kwh"}); !r) {
        return r;
    }
    if (const toml::node* n = table.get("price_per_kwh")) {
        const std::optional<double> v = n->is_number() ? n->value<double>() : std::nullopt;
        const double micros = v ? *v * static_cast<double>(audit::k_micros_per_unit) : -1;
        if (!v || !std::isfinite(micros) || micros < 0 ||
            micros > static_cast<double>(audit::k_max_micros_per_kwh)) {
            return at(path, *n, "energy.price_per_kwh",
                      "expected a price per kWh from 0 to 100 in the [pricing] currency, e.g. "
                      "0.15");
        }
        out.micros_per_kwh = std::llround(micros);
    }
    if (const toml::node* n = table.get("grams_co2_per_kwh")) {
        const std::optional<double> v = n->is_number() ? n->value<double>() : std::nullopt;
        if (!v || !std::isfinite(*v) || *v < 0 || *v > audit::k_max_grams_co2_per_kwh) {
            return at(path, *n, "energy.grams_co2_per_kwh",
                      "expected grams of CO2 per kWh from 0 to 2000, e.g. 350");
        }
        out.grams_co2_per_kwh = *v;
    }
    return {};
}

Result<void> parse_health(const std::string& path, const toml::table& table,
                          audit::HealthRules& out) {
    if (auto r = check_keys(path, table, "health", {"light_power_pct"}); !r) {
        return r;
    }
    if (const toml::node* n = table.get("light_power_pct")) {
        const std::optional<std::int64_t> v = n->value_exact<std::int64_t>();
        if (!v || *v < 5 || *v > 95 || *v % 5 != 0) {
            return at(path, *n, "health.light_power_pct",
                      "expected a whole percentage of the power limit, a multiple of 5 from 5 to "
                      "95, e.g. 30");
        }
        out.light_power_pct = static_cast<int>(*v);
    }
    return {};
}

Result<void> parse_report(const std::string& path, const toml::table& table,
                          audit::Grouping& grouping, std::string& time_zone) {
    if (auto r = check_keys(path, table, "report", {"group_by", "time_zone"}); !r) {
        return r;
    }
    if (const toml::node* n = table.get("time_zone")) {
        const std::optional<std::string> v = n->value<std::string>();
        if (!v || v->empty() || !TimeZone::load(*v)) {
            return at(path, *n, "report.time_zone",
                      "expected UTC, local, or an IANA time zone name such as \"Europe/Berlin\"");
        }
        time_zone = *v;
    }
    if (const toml::node* n = table.get("group_by")) {
        const std::optional<std::string> v = n->value<std::string>();
        if (!v || (*v != "user" && *v != "team" && *v != "namespace")) {
            return at(path, *n, "report.group_by", "expected \"user\", \"team\" or \"namespace\"");
        }
        grouping.by = *v == "team"        ? audit::GroupBy::team
                      : *v == "namespace" ? audit::GroupBy::pod_namespace
                                          : audit::GroupBy::user;
    }
    return {};
}

Result<void> parse_teams(const std::string& path, const toml::table& table, audit::Grouping& out) {
    for (const auto& [key, node] : table) {
        const std::string user(key.str());
        const std::optional<std::string> team = node.value<std::string>();
        if (!team || team->empty()) {
            return at(path, node, "teams." + user, "expected a team name, e.g. alice = \"vision\"");
        }
        out.team_of[user] = *team;
    }
    return {};
}

Result<void> parse_retention(const std::string& path, const toml::table& table,
                             store::RetentionPolicy& out) {
    if (auto r = check_keys(path, table, "retention", {"raw", "rollup"}); !r) {
        return r.error();
    }
    for (const char* key : {"raw", "rollup"}) {
        const toml::node* n = table.get(key);
        if (n == nullptr) {
            continue;
        }
        const std::optional<std::string> v = n->value<std::string>();
        std::optional<DurationUs> period;
        if (!v || *v != "forever") {
            const Result<DurationUs> d = v ? parse_duration(*v) : Result<DurationUs>(Error{"x"});
            if (!d || d.value() < k_us_per_hour) {
                return at(path, *n, std::string("retention.") + key,
                          "expected a duration of at least 1h (such as \"90d\") or \"forever\"");
            }
            period = d.value();
        }
        (std::string(key) == "raw" ? out.raw_us : out.rollup_us) = period;
    }
    return {};
}

} // namespace gua::config
