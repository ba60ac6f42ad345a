// SPDX-License-Identifier: Apache-2.0
// Reading the fleet view from Prometheus: the hosts' scrape health and ticks, each card's raw
// state counters of the window (and a coarse day for long idle-held streaks), its users' counters
// and its latest readings (docs/fleet-now.md says which series and how).
#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "fleet/fleet.hpp"
#include "fleet/now.hpp"
#include "fleet/now_runs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <utility>

namespace gua::report {

namespace {

using telemetry::Family;
using FleetSamples = std::vector<std::pair<TimeUs, double>>;
using CardKey = std::pair<std::string, std::string>; ///< host, uuid

/// What the window holds of one card.
struct CardSeries {
    int gpu = 0;
    std::string model;
    std::map<std::string, FleetSamples> states;
    std::map<std::string, std::map<std::string, FleetSamples>> users; ///< user → state → samples
    FleetSamples held_idle;                                           ///< held byte-seconds
};

struct FleetReadContext {
    PrometheusClient& prom;
    const FleetNowOptions& o;
    TimeUs now;
};

std::string host_of(const PromLabels& labels, const std::string& host_label) {
    std::string host = prom_label(labels, host_label);
    return host.empty() ? "(no " + host_label + ")" : host;
}

/// Each series' value of the instant query `promql`, by its labels.
void fleet_instant(FleetReadContext& c, const std::string& promql,
                   const std::function<void(const PromLabels&, double)>& sink) {
    c.prom.query_each(promql, c.now, [&](PromLabels& labels, std::optional<double> value) {
        if (value) {
            sink(labels, *value);
        }
    });
}

void fleet_samples(FleetReadContext& c, const std::string& selector,
                   const std::function<void(const PromLabels&, FleetSamples&)>& sink) {
    c.prom.query_samples(selector + prom_range(c.o.window_us), c.now,
                         [&](PromLabels& labels, FleetSamples& points) { sink(labels, points); });
}

std::string last_over(const std::string& selector, DurationUs range) {
    return "last_over_time(" + selector + prom_range(range) + ")";
}

double median_spacing_s(const FleetSamples& points) {
    std::vector<TimeUs> gaps;
    for (std::size_t i = 1; i < points.size(); ++i) {
        gaps.push_back(points[i].first - points[i - 1].first);
    }
    if (gaps.empty()) {
        return 0;
    }
    std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
    return static_cast<double>(gaps[gaps.size() / 2]) / 1e6;
}

std::map<std::string, FleetHostNow> read_host_ticks(FleetReadContext& c) {
    std::map<std::string, FleetHostNow> hosts;
    const std::string& label = c.o.host_label;
    fleet_instant(c, last_over(family(Family::daemon_last_tick_timestamp_seconds), c.o.lookback_us),
                  [&](const PromLabels& l, double v) {
                      FleetHostNow& h = hosts[host_of(l, label)];
                      const auto t = static_cast<TimeUs>(v * 1e6);
                      h.last_tick = std::max(h.last_tick.value_or(t), t);
                  });
    fleet_instant(c, last_over(family(Family::daemon_tick_interval_seconds), c.o.lookback_us),
                  [&](const PromLabels& l, double v) {
                      const auto it = hosts.find(host_of(l, label));
                      if (it != hosts.end()) {
                          it->second.tick_interval_s = v;
                      }
                  });
    fleet_samples(c, family(Family::daemon_ticks_total),
                  [&](const PromLabels& l, FleetSamples& points) {
                      const auto it = hosts.find(host_of(l, label));
                      if (it != hosts.end() && !points.empty()) {
                          it->second.last_scrape = points.back().first;
                          it->second.scrape_interval_s = median_spacing_s(points);
                      }
                  });
    for (auto& [name, h] : hosts) {
        h.host = name;
    }
    return hosts;
}

/// Marks hosts whose gua scrape job reports `up` 0 as down, and hosts without a recent tick as
/// stale.
void judge_hosts(FleetReadContext& c, std::map<std::string, FleetHostNow>& hosts) {
    const std::string& label = c.o.host_label;
    std::set<std::pair<std::string, std::string>> gua_jobs; // host, job
    fleet_instant(c,
                  fmt::format("max by ({}, job) ({})", label,
                              last_over(family(Family::build_info), c.o.lookback_us)),
                  [&](const PromLabels& l, double) {
                      gua_jobs.emplace(host_of(l, label), prom_label(l, "job"));
                  });
    fleet_instant(c, "up", [&](const PromLabels& l, double v) {
        const std::string host = host_of(l, label);
        const auto it = hosts.find(host);
        if (it != hosts.end() && v < 0.5 && gua_jobs.contains({host, prom_label(l, "job")})) {
            it->second.status = "down";
            it->second.detail = "its scrape fails (up is 0)";
        }
    });
    for (auto& [name, h] : hosts) {
        if (h.status != "ok") {
            continue;
        }
        const double tick = h.tick_interval_s.value_or(0);
        const double scrape = h.scrape_interval_s.value_or(0);
        const double late_s = 3 * tick + 2 * scrape;
        if (!h.last_scrape) {
            h.status = "stale";
            h.detail = fmt::format("no scrape in the last {}", prom_range(c.o.window_us));
        } else if (!h.last_tick ||
                   static_cast<double>(c.now - *h.last_tick) / 1e6 > std::max(late_s, 1.0)) {
            h.status = "stale";
            h.detail = "its daemon has not ticked for 3 intervals";
        }
    }
}

std::map<CardKey, CardSeries> read_card_series(FleetReadContext& c) {
    std::map<CardKey, CardSeries> cards;
    const std::string& label = c.o.host_label;
    const std::string& server = c.prom.url();
    fleet_instant(c, last_over(family(Family::gpu_info), c.o.lookback_us),
                  [&](const PromLabels& l, double) {
                      CardSeries& s = cards[{host_of(l, label), prom_label(l, "uuid")}];
                      s.gpu = gpu_index(l, server);
                      s.model = prom_label(l, "model");
                  });
    fleet_samples(c, family(Family::gpu_seconds_total),
                  [&](const PromLabels& l, FleetSamples& points) {
                      CardSeries& s = cards[{host_of(l, label), prom_label(l, "uuid")}];
                      s.gpu = gpu_index(l, server);
                      if (s.model.empty()) {
                          s.model = prom_label(l, "model");
                      }
                      s.states[prom_label(l, "state")] = std::move(points);
                  });
    fleet_samples(
        c, family(Family::gpu_user_seconds_total), [&](const PromLabels& l, FleetSamples& points) {
            const auto it = cards.find({host_of(l, label), prom_label(l, "uuid")});
            if (it != cards.end()) {
                it->second.users[prom_label(l, "user")][prom_label(l, "state")] = std::move(points);
            }
        });
    fleet_samples(c, family(Family::gpu_held_bytes_seconds_total) + "{during=\"idle_held\"}",
                  [&](const PromLabels& l, FleetSamples& points) {
                      const auto it = cards.find({host_of(l, label), prom_label(l, "uuid")});
                      if (it != cards.end()) {
                          it->second.held_idle = std::move(points);
                      }
                  });
    return cards;
}

const std::map<std::string, std::string> k_state_names = {{"active", "active"},
                                                          {"idle_held", "idle-held"},
                                                          {"truly_idle", "truly-idle"},
                                                          {"allocated_unused", "allocated-unused"},
                                                          {"unmeasured", "unmeasured"}};

std::string state_name(const std::string& label) {
    const auto it = k_state_names.find(label);
    return it != k_state_names.end() ? it->second : label;
}

double growth(const std::vector<double>& v, std::size_t i) {
    return std::max(v[i] - v[i - 1], 0.0);
}

/// The users of the newest tick: idle-held ones with their share of the held memory and their
/// run, active ones by SM share.
void fill_holders(FleetCardNow& card, const CardSeries& s, const CounterTimeline& t,
                  std::size_t tick, const StateRun& card_run) {
    const auto card_idle = t.values.find("idle_held");
    const double idle_gain = card_idle == t.values.end() ? 0 : growth(card_idle->second, tick);
    const std::vector<double> held = values_at(t.times, s.held_idle);
    for (const auto& entry : s.users) {
        const auto& user = entry.first;
        const auto& states = entry.second; // a plain reference: clang 14 captures no bindings
        const auto series = [&](const char* state) {
            const auto it = states.find(state);
            return values_at(t.times, it == states.end() ? FleetSamples{} : it->second);
        };
        const std::vector<double> idle = series("idle_held");
        const std::vector<double> active = series("active");
        FleetHolderNow h;
        h.user = user;
        if (idle_gain > 0 && growth(idle, tick) > 0) {
            h.state = "idle-held";
            const double share = std::min(growth(idle, tick) / idle_gain, 1.0);
            const double held_mib = growth(held, tick) / idle_gain / 1048576;
            if (held_mib > 0) {
                h.memory_mib = share * held_mib;
            } else if (card.memory_used_mib) {
                h.memory_mib = share * *card.memory_used_mib;
            }
            const StateRun run = holder_run(t, idle);
            // On an idle-held card, a holder there since the card's run began has its length.
            const bool whole = card.state == "idle-held" &&
                               (run.base == card_run.base || run.seconds >= card_run.seconds);
            h.idle_held_s = whole && card.state_for_s ? *card.state_for_s : run.seconds;
            h.idle_held_at_least = whole ? card.state_for_at_least : run.at_least;
        } else if (growth(active, tick) > 0) {
            h.state = "active";
        } else {
            continue;
        }
        card.holders.push_back(std::move(h));
    }
    std::stable_sort(card.holders.begin(), card.holders.end(), [](const auto& a, const auto& b) {
        return a.memory_mib.value_or(-1) > b.memory_mib.value_or(-1);
    });
}

struct BuiltCard {
    FleetCardNow card;
    CounterTimeline timeline;
    StateRun run;
    bool reached_window_start = false;
};

BuiltCard build_card(const CardKey& key, const CardSeries& s) {
    BuiltCard b;
    FleetCardNow& card = b.card;
    card.host = key.first;
    card.uuid = key.second;
    card.gpu = s.gpu;
    card.model = s.model;
    card.state = "unknown";
    b.timeline = align_counters(s.states);
    const std::optional<std::size_t> tick = newest_tick(b.timeline);
    if (!tick) {
        return b;
    }
    const std::string state = state_of_interval(b.timeline, *tick);
    card.as_of = b.timeline.times[*tick];
    if (state.empty()) {
        return b;
    }
    card.state = card.last_state = state_name(state);
    b.run = state_run(b.timeline, state);
    card.state_for_s = b.run.seconds;
    card.state_for_at_least = b.run.at_least;
    b.reached_window_start = b.run.at_least && b.run.base == 0;
    return b;
}

void read_gauges(FleetReadContext& c, std::vector<BuiltCard>& built) {
    std::map<CardKey, FleetCardNow*> index;
    for (BuiltCard& b : built) {
        index[{b.card.host, b.card.uuid}] = &b.card;
    }
    const auto gauge = [&](const std::string& name, double scale,
                           std::optional<double> FleetCardNow::*field) {
        fleet_instant(c, last_over(name, c.o.window_us), [&](const PromLabels& l, double v) {
            const auto it = index.find({host_of(l, c.o.host_label), prom_label(l, "uuid")});
            if (it != index.end()) {
                it->second->*field = v * scale;
            }
        });
    };
    fleet_instant(c, family(Family::allocation_info), [&](const PromLabels& l, double) {
        const auto it = index.find({host_of(l, c.o.host_label), prom_label(l, "uuid")});
        if (it != index.end()) {
            it->second->allocations.push_back({prom_label(l, "kind"), prom_label(l, "id"),
                                               prom_label(l, "user"), prom_label(l, "account")});
        }
    });
    gauge("gua_gpu_memory_used_bytes", 1.0 / 1048576, &FleetCardNow::memory_used_mib);
    gauge(family(Family::gpu_memory_total_bytes), 1.0 / 1048576, &FleetCardNow::memory_total_mib);
    gauge(family(Family::gpu_utilization_ratio), 100.0, &FleetCardNow::util_pct);
}

/// `uuids` as a PromQL regular expression that matches exactly them.
std::string uuid_regex(const std::set<std::string>& uuids) {
    std::string regex;
    for (const std::string& u : uuids) {
        std::string quoted;
        for (const char ch : u) {
            quoted += std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '-'
                          ? std::string(1, ch)
                          : fmt::format("\\\\x{:02x}", static_cast<unsigned char>(ch));
        }
        regex += (regex.empty() ? "" : "|") + quoted;
    }
    return regex;
}

/// Follows the idle-held and allocated-unused runs that fill the whole window further back: over
/// 4, 16, 64… windows (up to the lookback) at 720 steps each, one query_range per span for the
/// cards whose run still reaches its start.
void extend_long_runs(FleetReadContext& c, std::vector<BuiltCard>& built) {
    std::vector<BuiltCard*> pending;
    for (BuiltCard& b : built) {
        if (b.reached_window_start &&
            (b.card.state == "idle-held" || b.card.state == "allocated-unused")) {
            pending.push_back(&b);
        }
    }
    for (DurationUs span = c.o.window_us; !pending.empty() && span < c.o.lookback_us;) {
        span = std::min(span * 4, c.o.lookback_us);
        const DurationUs step = std::max<DurationUs>(span / 720, k_us_per_second);
        std::set<std::string> uuids;
        for (const BuiltCard* b : pending) {
            uuids.insert(b->card.uuid);
        }
        std::map<CardKey, std::map<std::string, FleetSamples>> coarse;
        c.prom.query_range_each(
            fmt::format("{}{{uuid=~\"{}\"}}", family(Family::gpu_seconds_total), uuid_regex(uuids)),
            c.now - span, c.now, step, [&](PromLabels& l, FleetSamples& points) {
                coarse[{host_of(l, c.o.host_label), prom_label(l, "uuid")}]
                      [prom_label(l, "state")] = std::move(points);
            });
        std::vector<BuiltCard*> still;
        for (BuiltCard* b : pending) {
            const auto it = coarse.find({b->card.host, b->card.uuid});
            if (it == coarse.end()) {
                continue;
            }
            const auto state =
                std::find_if(k_state_names.begin(), k_state_names.end(),
                             [&](const auto& e) { return e.second == b->card.state; });
            const CounterTimeline t = align_counters(it->second);
            const StateRun run = state_run(t, state->first);
            if (run.seconds > b->card.state_for_s.value_or(0)) {
                b->card.state_for_s = run.seconds;
                b->card.state_for_at_least = run.at_least;
            }
            // Older samples may exist only when this span's data reached back to its start.
            if (run.at_least && run.base == 0 && !t.times.empty() &&
                t.times.front() <= c.now - span + step) {
                still.push_back(b);
            }
        }
        pending = std::move(still);
    }
}

} // namespace

FleetNow read_fleet_now(PrometheusClient& prom, const FleetNowOptions& options, TimeUs now) {
    FleetReadContext c{prom, options, now};
    FleetNow fleet;
    fleet.now = now;
    fleet.url = prom.url();
    fleet.host_label = options.host_label;
    fleet.window_us = options.window_us;
    fleet.lookback_us = options.lookback_us;
    std::map<std::string, FleetHostNow> hosts = read_host_ticks(c);
    if (hosts.empty()) {
        throw Fatal(fmt::format("Prometheus at {} holds no gua daemon series ({}) in the last {}: "
                                "is it scraping gua daemons (`gua daemon --listen`)?",
                                prom.url(), family(Family::daemon_last_tick_timestamp_seconds),
                                format_duration(options.lookback_us)));
    }
    judge_hosts(c, hosts);
    const std::map<CardKey, CardSeries> series = read_card_series(c);
    std::vector<BuiltCard> built;
    for (const auto& [key, s] : series) {
        built.push_back(build_card(key, s));
    }
    extend_long_runs(c, built);
    read_gauges(c, built);
    for (BuiltCard& b : built) {
        FleetCardNow& card = b.card;
        const auto host_it = hosts.find(card.host);
        if (!card.as_of && host_it != hosts.end() && host_it->second.status == "ok") {
            continue; // no tick in the window on a host that ticks: the card is gone
        }
        if (card.as_of && !card.last_state.empty()) {
            fill_holders(card, series.at({card.host, card.uuid}), b.timeline,
                         *newest_tick(b.timeline), b.run);
        }
        FleetHostNow& host = hosts[card.host];
        host.host = card.host;
        ++host.cards;
        card.host_status = host.status;
        if (host.status != "ok") {
            card.state = host.status;
            card.state_for_s.reset();
            card.state_for_at_least = false;
            for (FleetHolderNow& h : card.holders) {
                h.idle_held_s.reset();
                h.idle_held_at_least = false;
            }
        }
        if (card.state == "idle-held") {
            double held = 0;
            for (const FleetHolderNow& h : card.holders) {
                held += h.memory_mib.value_or(0);
            }
            card.waste_mib_s = held * card.state_for_s.value_or(0);
        }
        fleet.cards.push_back(std::move(card));
    }
    for (auto& [name, h] : hosts) {
        fleet.hosts.push_back(h);
    }
    fleet_order(fleet.cards);
    return fleet;
}

} // namespace gua::report
