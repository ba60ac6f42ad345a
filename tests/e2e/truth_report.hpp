// SPDX-License-Identifier: Apache-2.0
// The one place where the ground-truth tests read `gua report --format json`: per-card state
// seconds, flagged (snapshot / unmeasured) seconds and identity GPU-seconds. Field names follow
// docs/report-json.md; where the provenance fields are renamed, only this file changes.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>

namespace gua::e2e {

/// One card's figures in the report, in seconds of card-time.
struct ReportCard {
    int index = 0;
    double active_s = 0;
    double idle_held_s = 0;
    double truly_idle_s = 0;
    double unmeasured_s = 0; ///< no utilization, lost card, lost samples, unknown holders
    double snapshot_s = 0;   ///< measured by once-per-poll snapshots only
    /// Card-time whose figures the report itself marks as uncertain.
    double flagged_s() const { return unmeasured_s + snapshot_s; }
    /// All of the card's recorded time, as the report accounts for it.
    double total_s() const { return active_s + idle_held_s + truly_idle_s + unmeasured_s; }
};

/// What the ground-truth tests compare with the scenario.
struct ReportFigures {
    std::map<std::string, ReportCard> cards;      ///< by uuid
    std::map<std::string, double> identity_s;     ///< identities.top[].gpu_hours in seconds
    double headline_attributable_s = 0;           ///< active + idle-held GPU-seconds, all cards
    double unused_equiv_gpus = 0;                 ///< waste: idle-held + truly idle, in GPUs
    std::map<std::string, double> price_per_hour; ///< cost.gpus[] by uuid (when present)
};

/// `object[key]` as a number; 0 when absent or not a number.
inline double number_at(const nlohmann::json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_number() ? it->get<double>() : 0.0;
}

/// `object[key]`, or an empty object when absent.
inline nlohmann::json member(const nlohmann::json& object, const char* key) {
    const auto it = object.is_object() ? object.find(key) : object.end();
    return it != object.end() ? *it : nlohmann::json::object();
}

/// Reads the figures above from a JSON report (absent fields read as 0).
inline ReportFigures report_figures(const nlohmann::json& report) {
    ReportFigures f;
    std::map<int, std::string> uuid_of_row;
    const nlohmann::json gpus = report.value("gpus", nlohmann::json::array());
    const auto hours = [](const nlohmann::json& o, const char* key) {
        return 3600.0 * number_at(o, key);
    };
    for (std::size_t i = 0; i < gpus.size(); ++i) {
        const nlohmann::json& g = gpus[i];
        const nlohmann::json st = member(g, "states");
        const nlohmann::json prov = member(g, "provenance");
        ReportCard c;
        c.index = g.value("index", -1);
        c.active_s = hours(st, "active_gpu_hours");
        c.idle_held_s = hours(st, "idle_held_gpu_hours");
        c.truly_idle_s = hours(st, "truly_idle_gpu_hours");
        c.unmeasured_s = hours(st, "unmeasured_gpu_hours");
        c.snapshot_s = hours(prov, "snapshot_gpu_hours");
        f.cards[g.value("uuid", std::string())] = c;
        uuid_of_row[static_cast<int>(i)] = g.value("uuid", std::string());
    }
    for (const nlohmann::json& i :
         member(report, "identities").value("top", nlohmann::json::array())) {
        f.identity_s[i.value("name", std::string())] += hours(i, "gpu_hours");
    }
    const nlohmann::json h = member(report, "headline");
    f.headline_attributable_s = hours(h, "active_gpu_hours") + hours(h, "idle_held_gpu_hours");
    const nlohmann::json w = member(report, "waste");
    f.unused_equiv_gpus =
        number_at(w, "idle_held_equiv_gpus") + number_at(w, "truly_idle_equiv_gpus");
    const nlohmann::json cost_rows = member(report, "cost").value("gpus", nlohmann::json::array());
    for (std::size_t i = 0; i < cost_rows.size(); ++i) { // same cards and order as gpus[]
        f.price_per_hour[uuid_of_row[static_cast<int>(i)]] =
            number_at(cost_rows[i], "price_per_gpu_hour");
    }
    return f;
}

} // namespace gua::e2e
