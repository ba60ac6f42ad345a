// SPDX-License-Identifier: Apache-2.0
// Ground truth of a fake-driver scenario by exact integration of piecewise-constant series.
#include "support/ground_truth.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace gua::test {

using nlohmann::json;

Series::Series(const json& points, double fallback) : m_fallback(fallback) {
    if (points.is_array()) {
        for (const json& p : points) {
            m_points.emplace_back(p.at(0).get<double>(), p.at(1).get<double>());
        }
    }
}

double Series::at(double t) const {
    if (m_points.empty()) {
        return m_fallback;
    }
    double v = m_points.front().second;
    for (const auto& [from, value] : m_points) {
        if (from > t) {
            break;
        }
        v = value;
    }
    return v;
}

void Series::breaks(double a, double b, std::vector<double>& out) const {
    for (const auto& p : m_points) {
        if (p.first > a && p.first < b) {
            out.push_back(p.first);
        }
    }
}

double Series::integral(double a, double b) const {
    std::vector<double> cuts{a};
    breaks(a, b, cuts);
    cuts.push_back(b);
    std::sort(cuts.begin(), cuts.end());
    double total = 0;
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
        total += at(cuts[i]) * (cuts[i + 1] - cuts[i]);
    }
    return total;
}

GroundTruth::GroundTruth(const json& scenario, TruthRules rules) : m_rules(rules) {
    const json devices = scenario.value("devices", json::array());
    for (std::size_t i = 0; i < devices.size(); ++i) {
        const json& d = devices[i];
        const int device = static_cast<int>(i);
        m_util.emplace_back(d.value("util", json()), 0.0);
        const std::string uuid =
            d.value("uuid", "GPU-00000000-0000-0000-0000-00000000000" + std::to_string(i));
        if (d.value("mig", false) && d.contains("mig_instances")) {
            const json& instances = d["mig_instances"];
            for (std::size_t m = 0; m < instances.size(); ++m) {
                m_cards.push_back({instances[m].at("uuid").get<std::string>(), device,
                                   static_cast<int>(m), false});
            }
        } else {
            m_cards.push_back({uuid, device, -1, true});
        }
    }
    for (const json& p : scenario.value("processes", json::array())) {
        Proc proc;
        proc.device = p.value("device", 0);
        proc.mig_slot = p.contains("mig_instance") ? p["mig_instance"].get<int>() : -1;
        proc.who = p.value("who", std::string("unknown"));
        proc.holder = p.value("type", std::string("compute")) != "graphics";
        proc.start = p.value("start", -std::numeric_limits<double>::infinity());
        proc.end = p.value("end", std::numeric_limits<double>::infinity());
        proc.memory_mib = Series(p.value("memory_mib", json()), 0.0);
        proc.sm_util = Series(p.value("sm_util", json()), 0.0);
        m_procs.push_back(std::move(proc));
    }
}

const TruthCard& GroundTruth::card(const std::string& uuid) const {
    for (const TruthCard& c : m_cards) {
        if (c.uuid == uuid) {
            return c;
        }
    }
    throw std::out_of_range("the scenario has no card " + uuid);
}

void GroundTruth::add_instant(const TruthCard& card, double t, double dt, CardTruth& out) const {
    std::vector<const Proc*> listed;
    double held = 0;
    double sm = 0;
    for (const Proc& p : m_procs) {
        if (p.device == card.device && (card.mig_slot < 0 || p.mig_slot == card.mig_slot) &&
            p.start <= t && t < p.end) {
            listed.push_back(&p);
            held += p.holder ? p.memory_mib.at(t) : 0.0;
            sm += p.sm_util.at(t);
        }
    }
    const bool active =
        m_util[static_cast<std::size_t>(card.device)].at(t) >= m_rules.active_util_pct;
    if (active) {
        out.active_s += dt;
        double mem = 0;
        for (const Proc* p : listed) {
            mem += p->memory_mib.at(t);
        }
        if (listed.empty() || (sm <= 0 && mem <= 0)) {
            out.identity_s["(no process)"] += dt;
            return;
        }
        for (const Proc* p : listed) {
            const double share = sm > 0 ? p->sm_util.at(t) / sm : p->memory_mib.at(t) / mem;
            out.identity_s[p->who] += dt * share;
        }
    } else if (held > m_rules.held_mib) {
        out.idle_held_s += dt;
        for (const Proc* p : listed) {
            if (p->holder) {
                out.identity_s[p->who] += dt * p->memory_mib.at(t) / held;
            }
        }
    } else {
        out.truly_idle_s += dt;
    }
}

CardTruth GroundTruth::integrate(const std::string& uuid, const std::vector<Span>& spans) const {
    const TruthCard& c = card(uuid);
    CardTruth out;
    for (const Span& span : spans) {
        out.recorded_s += span.to_s - span.from_s;
        std::vector<double> cuts{span.from_s, span.to_s};
        m_util[static_cast<std::size_t>(c.device)].breaks(span.from_s, span.to_s, cuts);
        for (const Proc& p : m_procs) {
            for (const double edge : {p.start, p.end}) {
                if (edge > span.from_s && edge < span.to_s) {
                    cuts.push_back(edge);
                }
            }
            p.memory_mib.breaks(span.from_s, span.to_s, cuts);
            p.sm_util.breaks(span.from_s, span.to_s, cuts);
        }
        std::sort(cuts.begin(), cuts.end());
        for (std::size_t i = 1; i < cuts.size(); ++i) {
            if (cuts[i] > cuts[i - 1]) {
                add_instant(c, cuts[i - 1], cuts[i] - cuts[i - 1], out);
            }
        }
    }
    return out;
}

json fake_scenario(json scenario) {
    if (scenario.contains("processes")) {
        for (json& p : scenario["processes"]) {
            p.erase("who");
        }
    }
    return scenario;
}

} // namespace gua::test
