// SPDX-License-Identifier: Apache-2.0
// What the gua-counter and dcgm fleet reports share: model header, coverage, identities, hosts.
#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "fleet/fleet.hpp"
#include "prometheus/answer.hpp"
#include "report/build.hpp"
#include "report/build_cost.hpp"
#include "report/shares.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

namespace gua::report {

ReportModel start_fleet_model(const PrometheusClient& prom, const BuildOptions& options,
                              const TimeZone& tz) {
    if (options.gpu || options.user || options.interval_override) {
        throw Fatal("--gpu, --user and --interval are not supported with --prometheus",
                    ExitCode::usage);
    }
    ReportModel m = model_for_window(options, tz);
    m.host = "fleet via Prometheus " + prom.url();
    return m;
}

std::int64_t bounded_round(double value, double max) {
    return value > 0 ? std::llround(std::min(value, max)) : 0;
}

int gpu_index(const PromLabels& labels, const std::string& server) {
    const std::string text = prom_label(labels, "gpu");
    int index = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), index);
    const bool digits =
        !text.empty() && text.size() <= 6 &&
        std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || error != std::errc() || end != text.data() + text.size()) {
        throw Fatal(fmt::format("refused the answers of Prometheus at {}: series {}: its gpu "
                                "label \"{}\" is not a card index (a whole number)",
                                server, describe_series(labels), printable(text, 40)));
    }
    return index;
}

DurationUs coverage_step(TimeUs from, TimeUs to) {
    return std::max<DurationUs>((to - from) / 1000, k_us_per_second);
}

SeriesPresence presence_of(const std::vector<PromSeries>& series, const std::string& host_label,
                           TimeUs from, TimeUs to, DurationUs step) {
    SeriesPresence p;
    const auto points = static_cast<double>(std::max<DurationUs>((to - from) / step + 1, 1));
    std::set<TimeUs> any;
    for (const PromSeries& s : series) {
        const auto it = s.labels.find(host_label);
        const std::string host = it != s.labels.end() ? it->second : "";
        p.host_share[host] =
            std::min(1.0, p.host_share[host] + static_cast<double>(s.values.size()) / points);
        for (const auto& [t, v] : s.values) {
            any.insert(t);
        }
    }
    if (!any.empty()) {
        p.first = *any.begin();
        p.last_end = std::min(to, *any.rbegin() + step);
        const DurationUs allowed = std::max<DurationUs>(2 * step, k_us_per_minute);
        TimeUs previous = *any.begin();
        for (const TimeUs t : any) {
            if (t - previous > allowed) {
                p.gaps.emplace_back(previous + step, t);
            }
            previous = t;
        }
    }
    double total = 0;
    for (const auto& [host, share] : p.host_share) {
        total += share;
    }
    p.covered_share = p.host_share.empty() ? 0 : total / static_cast<double>(p.host_share.size());
    return p;
}

void rank_identities(ReportModel& m, std::vector<IdentityRow> rows, std::size_t top) {
    for (IdentityRow& r : rows) {
        r.gpu_hours = r.active_hours + r.idle_held_hours;
        r.idle_held_share = r.gpu_hours > 0 ? r.idle_held_hours / r.gpu_hours : 0;
    }
    std::sort(rows.begin(), rows.end(), [](const IdentityRow& a, const IdentityRow& b) {
        return a.gpu_hours != b.gpu_hours ? a.gpu_hours > b.gpu_hours : a.name < b.name;
    });
    m.identities_total = rows.size();
    if (rows.size() > top) {
        rows.resize(top);
    }
    m.identities = std::move(rows);
}

void price_fleet(ReportModel& m, const std::vector<FleetCard>& cards,
                 const audit::Pricing& pricing) {
    CardCostTable table(m.cost, pricing);
    // Σ price × time per state, for the mean price of an hour in that state.
    double active_micros_us = 0;
    double idle_held_micros_us = 0;
    audit::StateTimes all;
    std::set<std::int64_t> prices;
    for (std::size_t i = 0; i < cards.size() && i < m.gpus.size(); ++i) {
        const audit::CardPrice price = audit::card_price(pricing, cards[i].facts);
        table.add(m.gpus[i].index, m.gpus[i].model, price, cards[i].states);
        const auto micros = static_cast<double>(price.micros_per_gpu_hour);
        active_micros_us += micros * static_cast<double>(cards[i].states.active);
        idle_held_micros_us += micros * static_cast<double>(cards[i].states.idle_held);
        all += cards[i].states;
        prices.insert(price.micros_per_gpu_hour);
    }
    table.finish();
    const auto mean_price = [](double micros_us, DurationUs us) {
        return us > 0 ? std::llround(micros_us / static_cast<double>(us)) : std::int64_t{0};
    };
    const std::int64_t active_price = mean_price(active_micros_us, all.active);
    const std::int64_t idle_held_price = mean_price(idle_held_micros_us, all.idle_held);
    for (const IdentityRow& r : m.identities) {
        m.cost.identities.push_back(
            IdentityCostRow{r.name, audit::share_cost_cents(r.active_hours * 3600e6, active_price),
                            audit::share_cost_cents(r.idle_held_hours * 3600e6, idle_held_price)});
    }
    if (prices.size() > 1 && !m.identities.empty()) {
        m.notes.push_back("§7 prices each identity's time at the fleet's mean price of that state: "
                          "gua's per-user counters do not say which card the time was on");
    }
}

void summarise_hosts(ReportModel& m, const std::map<std::string, audit::StateTimes>& states,
                     const SeriesPresence& presence, const std::string& url) {
    for (const auto& [host, t] : states) {
        HostRow row;
        row.host = host;
        row.shares = shares_of(t);
        for (const GpuRow& g : m.gpus) {
            if (g.host == host) {
                ++row.gpus;
                row.samples += g.samples;
            }
        }
        const auto it = presence.host_share.find(host);
        row.covered_share = it != presence.host_share.end() ? it->second : 0;
        m.hosts.push_back(row);
    }
    m.host = fmt::format("fleet of {} host{} via Prometheus {}", m.hosts.size(),
                         m.hosts.size() == 1 ? "" : "s", url);
}

} // namespace gua::report
