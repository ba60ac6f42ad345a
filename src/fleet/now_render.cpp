// SPDX-License-Identifier: Apache-2.0
// The fleet view's order, its table and its JSON (`gua now --prometheus`, docs/fleet-now.md).
#include "core/duration.hpp"
#include "core/units.hpp"
#include "fleet/now.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace gua::report {

namespace {

/// Rank of a card's state in the worst-waste-first order.
int fleet_rank(const FleetCardNow& c) {
    static const std::map<std::string, int> k_rank = {
        {"idle-held", 0}, {"allocated-unused", 1}, {"truly-idle", 2}, {"unmeasured", 3},
        {"active", 4},    {"unknown", 5},          {"down", 6},       {"stale", 7}};
    const auto it = k_rank.find(c.state);
    return it != k_rank.end() ? it->second : 5;
}

std::string fleet_for(std::optional<double> seconds, bool at_least) {
    if (!seconds) {
        return "-";
    }
    const auto us = static_cast<DurationUs>(std::llround(*seconds)) * k_us_per_second;
    return (at_least ? "≥" : "") + (us < k_us_per_second ? std::string("0s") : format_duration(us));
}

std::string fleet_time(std::optional<TimeUs> t) {
    return t ? format_iso8601(*t / k_us_per_second * k_us_per_second) : std::string("never");
}

std::string fleet_memory(const FleetCardNow& c) {
    if (!c.memory_used_mib) {
        return "-";
    }
    const std::string used = format_gib(*c.memory_used_mib);
    return c.memory_total_mib ? used + " / " + format_gib(*c.memory_total_mib) : used;
}

std::string fleet_holders(const FleetCardNow& c) {
    std::string out;
    for (const FleetHolderNow& h : c.holders) {
        out += out.empty() ? "" : ", ";
        out += h.user;
        if (h.memory_mib) {
            out += " " + format_gib(*h.memory_mib);
        }
        if (h.state == "idle-held" && h.idle_held_s) {
            out += " idle " + fleet_for(h.idle_held_s, h.idle_held_at_least);
        } else if (h.state == "active") {
            out += " (active)";
        }
    }
    for (const FleetAllocationNow& a : c.allocations) {
        out += out.empty() ? "" : ", ";
        out += fmt::format("allocated to {} ({} {})", a.user.empty() ? "?" : a.user, a.kind, a.id);
    }
    return out.empty() ? "-" : out;
}

std::string fleet_state(const FleetCardNow& c) {
    if (c.host_status != "ok" && !c.last_state.empty()) {
        return c.state + " (was " + c.last_state + ")";
    }
    return c.state;
}

nlohmann::json fleet_opt(std::optional<double> v, double round_to = 1000) {
    return v ? nlohmann::json(std::round(*v * round_to) / round_to) : nlohmann::json(nullptr);
}

nlohmann::json fleet_opt_time(std::optional<TimeUs> t) {
    return t ? nlohmann::json(format_iso8601(*t)) : nlohmann::json(nullptr);
}

nlohmann::json fleet_card_json(const FleetCardNow& c) {
    nlohmann::json holders = nlohmann::json::array();
    for (const FleetHolderNow& h : c.holders) {
        holders.push_back({{"user", h.user},
                           {"state", h.state},
                           {"memory_mib", fleet_opt(h.memory_mib, 10)},
                           {"idle_held_s", fleet_opt(h.idle_held_s)},
                           {"idle_held_at_least", h.idle_held_at_least}});
    }
    nlohmann::json allocations = nlohmann::json::array();
    for (const FleetAllocationNow& a : c.allocations) {
        allocations.push_back(
            {{"kind", a.kind}, {"id", a.id}, {"user", a.user}, {"account", a.account}});
    }
    const bool idle_held = c.state == "idle-held";
    return {{"host", c.host},
            {"host_status", c.host_status},
            {"gpu", c.gpu},
            {"uuid", c.uuid},
            {"model", c.model},
            {"state", c.state},
            {"last_state",
             c.last_state.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.last_state)},
            {"state_for_s", fleet_opt(c.state_for_s)},
            {"state_for_at_least", c.state_for_at_least},
            {"idle_held_s", idle_held ? fleet_opt(c.state_for_s) : nlohmann::json(nullptr)},
            {"as_of", fleet_opt_time(c.as_of)},
            {"utilization_pct", fleet_opt(c.util_pct, 100)},
            {"memory_used_mib", fleet_opt(c.memory_used_mib, 10)},
            {"memory_total_mib", fleet_opt(c.memory_total_mib, 10)},
            {"idle_held_mib_hours", std::round(c.waste_mib_s / 3600 * 1000) / 1000},
            {"holders", holders},
            {"allocations", allocations}};
}

} // namespace

void fleet_order(std::vector<FleetCardNow>& cards) {
    std::stable_sort(cards.begin(), cards.end(), [](const FleetCardNow& a, const FleetCardNow& b) {
        const double af = a.state_for_s.value_or(0);
        const double bf = b.state_for_s.value_or(0);
        return std::make_tuple(fleet_rank(a), -a.waste_mib_s, -af, a.host, a.gpu) <
               std::make_tuple(fleet_rank(b), -b.waste_mib_s, -bf, b.host, b.gpu);
    });
}

std::string render_fleet_now_text(const FleetNow& fleet) {
    std::map<std::string, int> by_status;
    for (const FleetHostNow& h : fleet.hosts) {
        ++by_status[h.status];
    }
    std::string out = fmt::format("gua now — {} hosts, {} GPUs via Prometheus {} (host label {}) "
                                  "at {}\n",
                                  fleet.hosts.size(), fleet.cards.size(), fleet.url,
                                  fleet.host_label, fleet_time(fleet.now));
    out += fmt::format("hosts: {} ok", by_status["ok"]);
    for (const char* s : {"down", "stale"}) {
        if (by_status[s] > 0) {
            out += fmt::format(", {} {}", by_status[s], s);
        }
    }
    out += "\n";
    for (const FleetHostNow& h : fleet.hosts) {
        if (h.status != "ok") {
            out += fmt::format("  {} {}: {}; last tick {}\n", h.host, h.status, h.detail,
                               fleet_time(h.last_tick));
        }
    }
    std::size_t host_w = 4;
    std::size_t state_w = 5;
    for (const FleetCardNow& c : fleet.cards) {
        host_w = std::max(host_w, c.host.size());
        state_w = std::max(state_w, fleet_state(c).size());
    }
    const auto row = [&](const std::string& host, const std::string& gpu, const std::string& state,
                         const std::string& since, const std::string& util,
                         const std::string& memory, const std::string& model,
                         const std::string& holders) {
        return fmt::format("{:<{}}  {:>3}  {:<{}}  {:>9}  {:>5}  {:>19}  {:<24}  {}\n", host,
                           host_w, gpu, state, state_w, since, util, memory, model, holders);
    };
    out += "\n" + row("HOST", "GPU", "STATE", "FOR", "UTIL", "MEMORY", "MODEL", "HOLDERS");
    for (const FleetCardNow& c : fleet.cards) {
        const std::string util = c.util_pct ? fmt::format("{:.0f}%", *c.util_pct) : "-";
        out += row(c.host, std::to_string(c.gpu), fleet_state(c),
                   fleet_for(c.state_for_s, c.state_for_at_least), util, fleet_memory(c),
                   c.model.size() > 24 ? c.model.substr(0, 23) + "…" : c.model, fleet_holders(c));
    }
    if (fleet.cards.empty()) {
        out += "  (no GPU series)\n";
    }
    return out;
}

std::string render_fleet_now_json(const FleetNow& fleet) {
    nlohmann::json hosts = nlohmann::json::array();
    for (const FleetHostNow& h : fleet.hosts) {
        hosts.push_back({{"host", h.host},
                         {"status", h.status},
                         {"detail", h.detail},
                         {"last_tick", fleet_opt_time(h.last_tick)},
                         {"last_scrape", fleet_opt_time(h.last_scrape)},
                         {"tick_interval_s", fleet_opt(h.tick_interval_s)},
                         {"scrape_interval_s", fleet_opt(h.scrape_interval_s)},
                         {"gpus", h.cards}});
    }
    nlohmann::json gpus = nlohmann::json::array();
    for (const FleetCardNow& c : fleet.cards) {
        gpus.push_back(fleet_card_json(c));
    }
    const nlohmann::json doc = {{"schema_version", fleet.schema_version},
                                {"source", "prometheus"},
                                {"prometheus", fleet.url},
                                {"host_label", fleet.host_label},
                                {"now", format_iso8601(fleet.now)},
                                {"window_s", static_cast<double>(fleet.window_us) / 1e6},
                                {"lookback_s", static_cast<double>(fleet.lookback_us) / 1e6},
                                {"hosts", hosts},
                                {"gpus", gpus}};
    return doc.dump(2) + "\n";
}

} // namespace gua::report
