// SPDX-License-Identifier: Apache-2.0
// The scale test's fleet: per-card FREE → RUN → HOLD → FREE phases on office hours, each host's
// daemon (up periods, restarts, a reset) and scrapes rendered by exporter::Metrics.
#include "scale_fleet.hpp"

#include "export/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <random>
#include <set>

namespace gua::bench {

namespace {

constexpr TimeUs k_never = std::numeric_limits<TimeUs>::max() / 4;
constexpr std::int64_t k_pool_users = 150;
constexpr std::array<std::int64_t, 5> k_job_mib{3000, 12000, 24000, 40000, 70000};

enum class Phase : std::uint8_t { free, run, hold };

struct Proc {
    std::uint32_t pid = 0;
    int user = 0; ///< index into the host's users
    std::int64_t mib = 0;
    int sm_pct = 0;
};

struct Card {
    Phase phase = Phase::free;
    std::int64_t left = 0; ///< ticks left in the phase
    bool ends_in_hold = false;
    std::vector<Proc> procs;
};

std::string user_name(std::int64_t i) {
    return fmt::format("user{:03}", i);
}

std::string uuid_of(std::uint64_t seed, int host, int gpu) {
    std::mt19937_64 rng(seed * 1000003ULL + static_cast<std::uint64_t>(host) * 64 +
                        static_cast<std::uint64_t>(gpu));
    return fmt::format("GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", rng() & 0xffffffffULL,
                       rng() & 0xffffULL, rng() & 0xffffULL, rng() & 0xffffULL,
                       rng() & 0xffffffffffffULL);
}

} // namespace

const std::vector<std::string>& report_families() {
    static const std::vector<std::string> families{
        "gua_gpu_seconds_total",
        "gua_gpu_card_ticks_total",
        "gua_efficiency_seconds_total",
        "gua_identity_gpu_seconds_total",
        "gua_identity_idle_held_bytes_seconds_total",
        "gua_identity_card_ticks_total",
        "gua_gpu_info",
        "gua_gpu_memory_total_bytes",
        "gua_gpu_memory_used_bytes",
        "gua_daemon_ticks_total",
        "gua_daemon_start_time_seconds",
    };
    return families;
}

struct ScaleFleet::Host {
    int index = 0;
    std::string instance;
    std::string target_labels; ///< instance="…",job="gua"
    std::vector<telemetry::DeviceInfo> devices;
    std::vector<Card> cards;
    std::vector<std::string> users;
    std::mt19937_64 rng;
    exporter::MetricsOptions metrics_options;
    std::unique_ptr<exporter::Metrics> metrics;
    /// When the daemon runs: [begin, end) periods in time order; it starts over on a fresh
    /// database at the start of period `reset_period`.
    std::vector<std::pair<TimeUs, TimeUs>> periods;
    std::size_t period = 0;
    std::size_t reset_period = std::numeric_limits<std::size_t>::max();
    double missed_scrape = 0;
    bool unmeasured_ticks = false;
    TimeUs tick_t0 = k_never;
    TimeUs next_scrape = k_never;
    exporter::Health health;
    std::uint32_t next_pid = 1000;
    std::set<std::string> series;
    std::size_t last_lines = 0;
    telemetry::Tick tick;

    TimeUs period_begin() const {
        return period < periods.size() ? periods[period].first : k_never;
    }
    TimeUs period_end() const { return period < periods.size() ? periods[period].second : k_never; }

    void start_period(DurationUs tick_us) {
        if (period >= periods.size()) {
            tick_t0 = k_never;
            return;
        }
        const TimeUs begin = periods[period].first;
        health.started = begin;
        health.ticks = 0;
        // The first tick starts when the daemon is up (a host-specific delay under a tick).
        tick_t0 = begin + static_cast<DurationUs>(rng() % static_cast<std::uint64_t>(tick_us));
        if (!metrics || period == reset_period) {
            metrics = std::make_unique<exporter::Metrics>(metrics_options);
        }
    }
};

namespace {

using Host = ScaleFleet::Host;

bool office_hours(TimeUs t) {
    const std::int64_t hour = (t / k_us_per_hour) % 24;
    const std::int64_t weekday = (t / k_us_per_day + 4) % 7; // 1970-01-01 was a Thursday
    return weekday >= 1 && weekday <= 5 && hour >= 8 && hour < 19;
}

bool weekend(TimeUs t) {
    const std::int64_t weekday = (t / k_us_per_day + 4) % 7;
    return weekday == 0 || weekday == 6;
}

/// Moves card `c` to its next phase at `t` when its current one is over.
void next_phase(Host& h, Card& c, TimeUs t, DurationUs tick_us) {
    std::uniform_real_distribution<double> uni(0.0, 1.0);
    const auto ticks = [&](double lo_h, double hi_h) {
        const double us = (lo_h + uni(h.rng) * (hi_h - lo_h)) * static_cast<double>(k_us_per_hour);
        return std::max<std::int64_t>(1, static_cast<std::int64_t>(us) / tick_us);
    };
    const bool office = office_hours(t);
    const bool off_day = weekend(t);
    if (c.phase == Phase::free) {
        const double p_start = office ? 0.7 : (off_day ? 0.15 : 0.3);
        if (uni(h.rng) >= p_start) {
            c.left = office ? ticks(0.5, 3) : ticks(1, 6);
            return;
        }
        c.phase = Phase::run;
        c.left = office ? ticks(1, 10) : ticks(2, 16);
        c.ends_in_hold = uni(h.rng) < 0.5;
        c.procs.clear();
        const int owner = static_cast<int>(h.rng() % h.users.size());
        const int n = uni(h.rng) < 0.7 ? 1 : 2;
        for (int k = 0; k < n; ++k) {
            c.procs.push_back(Proc{h.next_pid++, owner, k_job_mib[h.rng() % k_job_mib.size()],
                                   20 + static_cast<int>(h.rng() % 71)});
        }
        if (h.users.size() > 1 && uni(h.rng) < 0.12) { // someone's notebook on the same card
            const int other = (owner + 1 + static_cast<int>(h.rng() % (h.users.size() - 1))) %
                              static_cast<int>(h.users.size());
            c.procs.push_back(Proc{h.next_pid++, other, uni(h.rng) < 0.5 ? 300 : 5000,
                                   1 + static_cast<int>(h.rng() % 4)});
        }
    } else if (c.phase == Phase::run && c.ends_in_hold) {
        // The job is done but its process keeps the memory: briefly in the office, often until
        // the next working morning otherwise.
        c.phase = Phase::hold;
        c.left = office ? ticks(0.5, 6) : ticks(2, off_day ? 60 : 16);
    } else {
        c.phase = Phase::free;
        c.procs.clear();
        c.left = office ? ticks(0.5, 3) : ticks(1, 6);
    }
}

/// The telemetry record of card `c` of `h` for exporter::Metrics: one snapshot reading, the
/// sampler's per-process active time by SM share.
void fill_record(const Host& h, std::size_t c, const Card& card, bool measured, bool active,
                 double util, std::int64_t held, int sm_total, DurationUs tick_us,
                 telemetry::CardTickRecord& r) {
    r = telemetry::CardTickRecord{};
    r.device = h.devices[c];
    if (measured) {
        r.util_source = telemetry::UtilSource::snapshot;
        r.util_pct = util;
        r.util_samples = 1;
        r.active_us = active ? tick_us : 0;
        r.bucket_us[util >= 90 ? 3 : util >= 70 ? 2 : util >= 10 ? 1 : 0] = tick_us;
        r.idle_unlisted_us = card.procs.empty() && !active ? tick_us : 0;
    }
    r.readings.mem_used_mib = held;
    for (const Proc& p : card.procs) {
        telemetry::ProcessTick pt;
        pt.pid = p.pid;
        pt.start_ticks = p.pid * 100ULL;
        pt.identity.user = h.users[static_cast<std::size_t>(p.user)];
        pt.identity.uid = 1000 + static_cast<std::uint32_t>(p.user);
        pt.identity.command = "python3";
        pt.mem_used_mib = p.mib;
        if (measured) {
            pt.sm_util_pct = card.phase == Phase::run ? p.sm_pct : 0;
            if (active && sm_total > 0) {
                pt.active_us = tick_us * p.sm_pct / sm_total;
            }
        }
        r.processes.push_back(std::move(pt));
    }
}

} // namespace

ScaleFleet::ScaleFleet(const ScaleOptions& o, std::vector<std::pair<TimeUs, TimeUs>> windows,
                       std::vector<std::string> families)
    : m_options(o), m_families(std::move(families)) {
    for (const auto& [from, to] : windows) {
        m_truth.push_back(WindowTruth{from, to, {}, {}, {}, {}});
    }
    m_user_cards.resize(m_truth.size());
    const DurationUs span = o.end - o.start;
    std::mt19937_64 fleet_rng(o.seed);
    for (int i = 0; i < o.hosts; ++i) {
        auto h = std::make_unique<Host>();
        h->index = i;
        h->rng.seed(o.seed * 7919ULL + static_cast<std::uint64_t>(i));
        h->instance = fmt::format("gpu-node-{:03}:9400", i);
        h->target_labels = fmt::format("instance=\"{}\",job=\"gua\"", h->instance);
        const bool hopper = i % 8 >= 5; // a mixed fleet: 5 A100 hosts for every 3 H100 ones
        for (int g = 0; g < o.gpus_per_host; ++g) {
            h->devices.push_back(telemetry::DeviceInfo{
                uuid_of(o.seed, i, g), g,
                hopper ? "NVIDIA H100 80GB HBM3" : "NVIDIA A100-SXM4-80GB", hopper ? 81559 : 81920,
                fmt::format("00000000:{:02X}:00.0", 0x18 + g * 0x10), ""});
        }
        h->cards.resize(static_cast<std::size_t>(o.gpus_per_host));
        // 3 to 6 users per host, drawn from the teams of neighbouring hosts.
        const std::int64_t base =
            static_cast<std::int64_t>(i) * k_pool_users / std::max(o.hosts, 1);
        const auto n_users = static_cast<std::size_t>(3 + h->rng() % 4);
        while (h->users.size() < n_users) {
            const std::int64_t u =
                (base + static_cast<std::int64_t>(h->rng() % 24) + k_pool_users - 12) %
                k_pool_users;
            if (std::find(h->users.begin(), h->users.end(), user_name(u)) == h->users.end()) {
                h->users.push_back(user_name(u));
            }
        }
        h->metrics_options.interval_us = o.tick_us;
        h->metrics_options.driver_version = "560.35.05";
        h->tick.duration_us = o.tick_us;
        h->tick.cards.resize(h->devices.size());
        TimeUs joins = o.start;
        TimeUs leaves = o.end;
        std::vector<std::pair<TimeUs, TimeUs>> down; // the daemon is stopped
        if (o.churn) {
            std::uniform_real_distribution<double> uni(0.0, 1.0);
            if (i == o.hosts - 1 && o.hosts > 2) {
                joins = o.start + span * 2 / 5; // new hardware
            }
            if (i == o.hosts - 2 && o.hosts > 2) {
                leaves = o.start + span * 13 / 20; // decommissioned
            }
            if (uni(fleet_rng) < 0.3) { // an upgrade or a reboot
                const TimeUs at =
                    o.start + static_cast<TimeUs>(uni(fleet_rng) * static_cast<double>(span));
                down.emplace_back(at, at + static_cast<DurationUs>((5 + uni(fleet_rng) * 1200) *
                                                                   k_us_per_second));
            }
            if (i == 3 % o.hosts) { // a new database: the counters start over
                const TimeUs at = o.start + span / 3;
                down.emplace_back(at, at + 10 * k_us_per_minute);
                h->reset_period = 1;
            }
            h->missed_scrape = 0.001;
            h->unmeasured_ticks = true;
        }
        std::sort(down.begin(), down.end());
        TimeUs up_from = joins;
        for (const auto& [d0, d1] : down) {
            if (d0 > up_from && d0 < leaves) {
                h->periods.emplace_back(up_from, d0);
                up_from = d1;
            }
        }
        if (up_from < leaves) {
            h->periods.emplace_back(up_from, leaves);
        }
        h->next_scrape =
            o.start + static_cast<DurationUs>(
                          fleet_rng() % static_cast<std::uint64_t>(o.scrape_us / k_us_per_ms)) *
                          k_us_per_ms;
        h->start_period(o.tick_us);
        m_hosts.push_back(std::move(h));
    }
}

ScaleFleet::~ScaleFleet() = default;

std::vector<WindowTruth> ScaleFleet::truth() const {
    std::vector<WindowTruth> out = m_truth;
    for (std::size_t w = 0; w < out.size(); ++w) {
        for (const auto& [user, cards] : m_user_cards[w]) {
            out[w].users[user].cards = cards.size();
        }
    }
    return out;
}

std::size_t ScaleFleet::series() const {
    std::size_t n = 0;
    for (const auto& h : m_hosts) {
        n += h->series.size();
    }
    return n;
}

void ScaleFleet::record_tick(Host& h) {
    const ScaleOptions& o = m_options;
    std::uniform_real_distribution<double> uni(0.0, 1.0);
    telemetry::Tick& tick = h.tick;
    tick.seq = h.health.ticks;
    tick.t0 = h.tick_t0;
    const TimeUs t1 = tick.t0 + o.tick_us;
    for (std::size_t c = 0; c < h.cards.size(); ++c) {
        Card& card = h.cards[c];
        if (card.left <= 0) {
            next_phase(h, card, tick.t0, o.tick_us);
        }
        --card.left;
        double util = 0;
        if (card.phase == Phase::run) {
            util = uni(h.rng) < 0.9 ? 40 + uni(h.rng) * 60 : uni(h.rng) * 30;
        } else if (card.phase == Phase::hold) {
            util = uni(h.rng) < 0.95 ? uni(h.rng) * 3 : uni(h.rng) * 12;
        } else if (uni(h.rng) < 0.003) {
            util = 15 + uni(h.rng) * 25; // a process gua cannot see
        }
        util = static_cast<double>(static_cast<int>(util)); // NVML reports whole percent
        const bool measured = !(h.unmeasured_ticks && uni(h.rng) < 2e-5);
        const bool active = measured && util >= 10;
        std::int64_t held = 0;
        int sm_total = 0;
        for (const Proc& p : card.procs) {
            held += p.mib;
            sm_total += card.phase == Phase::run ? p.sm_pct : 0;
        }
        if (!o.truth_only) {
            fill_record(h, c, card, measured, active, util, held, sm_total, o.tick_us,
                        tick.cards[c]);
        }
        // Ground truth, from the scenario: the tick is wholly in one state; active time goes to
        // the processes by SM share (by memory when none had SM), idle-held time by memory.
        for (WindowTruth& w : m_truth) {
            const DurationUs overlap = std::min(t1, w.to) - std::max(tick.t0, w.from);
            if (overlap <= 0) {
                continue;
            }
            const double s = static_cast<double>(overlap) / 1e6;
            const telemetry::DeviceInfo& device = h.devices[c];
            StateSeconds& st = w.cards[{h.instance, device.uuid}];
            w.card_index[device.uuid] = device.index;
            // The heatmap's cells: the overlap cut at the hour boundary a tick may straddle.
            const TimeUs a = std::max(tick.t0, w.from);
            const TimeUs b = std::min(t1, w.to);
            for (TimeUs x = a; x < b;) {
                const TimeUs y = std::min(b, (x / k_us_per_hour + 1) * k_us_per_hour);
                const std::int64_t day = (x / k_us_per_day + 4) % 7;
                StateSeconds& cell = w.heatmap[static_cast<std::size_t>(day)]
                                              [static_cast<std::size_t>(x / k_us_per_hour % 24)];
                const double part = static_cast<double>(y - x) / 1e6;
                (!measured    ? cell.unmeasured
                 : active     ? cell.active
                 : held > 100 ? cell.idle_held
                              : cell.truly_idle) += part;
                x = y;
            }
            const auto give = [&](const std::string& user, double active_s, double held_s) {
                UserSeconds& u = w.users[user];
                u.active += active_s;
                u.idle_held += held_s;
            };
            if (!measured) {
                st.unmeasured += s;
            } else if (active) {
                st.active += s;
                if (card.procs.empty()) {
                    const std::string nobody(exporter::k_no_process_user);
                    give(nobody, s, 0);
                    m_user_cards[static_cast<std::size_t>(&w - m_truth.data())][nobody].insert(
                        h.index * 64 + static_cast<int>(c));
                }
                for (const Proc& p : card.procs) {
                    const double share =
                        sm_total > 0 ? static_cast<double>(p.sm_pct) / sm_total
                                     : static_cast<double>(p.mib) / static_cast<double>(held);
                    give(h.users[static_cast<std::size_t>(p.user)], s * share, 0);
                }
            } else if (held > 100) {
                st.idle_held += s;
                for (const Proc& p : card.procs) {
                    give(h.users[static_cast<std::size_t>(p.user)], 0,
                         s * static_cast<double>(p.mib) / static_cast<double>(held));
                }
            } else {
                st.truly_idle += s;
            }
            for (const Proc& p : card.procs) {
                m_user_cards[&w - m_truth.data()][h.users[static_cast<std::size_t>(p.user)]].insert(
                    h.index * 64 + static_cast<int>(c));
            }
        }
    }
    if (!o.truth_only) {
        h.metrics->observe(tick);
    }
    ++h.health.ticks;
    h.health.last_tick_end = t1;
}

void ScaleFleet::scrape(Host& h, TimeUs at, std::string& out) {
    h.metrics->set_health(h.health);
    const std::string text = h.metrics->render();
    const TimeUs ms = at / k_us_per_ms;
    char stamp[32];
    const auto stamp_end =
        fmt::format_to_n(stamp, sizeof stamp, " {}.{:03}\n", ms / 1000, ms % 1000);
    const std::string_view ts(stamp, stamp_end.size);
    std::size_t lines = 0;
    std::size_t pos = 0;
    const std::size_t first = out.size();
    while (pos < text.size()) {
        std::size_t eol = text.find('\n', pos);
        if (eol == std::string::npos) {
            eol = text.size();
        }
        const std::string_view line(text.data() + pos, eol - pos);
        pos = eol + 1;
        if (line.empty() || line[0] == '#') {
            continue;
        }
        const std::size_t name_end = line.find_first_of("{ ");
        const std::string_view name = line.substr(0, name_end);
        if (!m_families.empty() &&
            std::find(m_families.begin(), m_families.end(), name) == m_families.end()) {
            continue;
        }
        const std::size_t value_at = line.rfind(' ');
        const std::string_view labels = line[name_end] == '{'
                                            ? line.substr(name_end + 1, value_at - name_end - 2)
                                            : std::string_view();
        out += name;
        out += '{';
        out += h.target_labels;
        if (!labels.empty()) {
            out += ',';
            out += labels;
        }
        out += '}';
        out += line.substr(value_at);
        out += ts;
        ++lines;
    }
    // Series appear rarely (a new user on the host, a first unmeasured tick): only when the
    // number of lines changed are this scrape's label sets collected again.
    if (lines != h.last_lines) {
        h.last_lines = lines;
        for (std::size_t line = first; line < out.size();) {
            const std::size_t key_end = out.find("} ", line);
            h.series.emplace(out.data() + line, key_end + 1 - line);
            line = out.find('\n', key_end) + 1;
        }
    }
    m_samples += lines;
}

void ScaleFleet::advance(TimeUs until, std::string& out,
                         const std::function<void(std::string&)>& flush) {
    const ScaleOptions& o = m_options;
    for (const auto& hp : m_hosts) {
        Host& h = *hp;
        for (;;) {
            const TimeUs te = h.tick_t0 + o.tick_us;
            const TimeUs ts = h.next_scrape;
            const TimeUs x = std::min(te, ts);
            if (x >= until || x >= o.end) {
                break;
            }
            if (x >= h.period_end()) { // the daemon stops; a tick in progress is lost
                ++h.period;
                h.start_period(o.tick_us);
                continue;
            }
            if (te <= ts) {
                record_tick(h);
                h.tick_t0 += o.tick_us;
            } else {
                std::uniform_real_distribution<double> uni(0.0, 1.0);
                if (ts >= h.period_begin() &&
                    !(h.missed_scrape > 0 && uni(h.rng) < h.missed_scrape) && !o.truth_only) {
                    scrape(h, ts, out);
                    if (out.size() > (1U << 20)) {
                        flush(out);
                    }
                }
                h.next_scrape += o.scrape_us;
            }
        }
    }
}

} // namespace gua::bench
