// SPDX-License-Identifier: Apache-2.0
// Property: over random histories of one 30 s tick polled every ≤ 5 s — holders appearing and
// exiting, taking turns, memory hovering at the held threshold, unknown memory, graphics
// contexts, failed process-list reads — the card-tick's idle-held / truly idle / unknown time and
// each user's idle-held time equal the truth integrated poll by poll (to a rounding µs per poll),
// and identity time adds up exactly to the card's active + idle-held time. A second property plays
// histories of several ticks at sub-poll resolution: processes starting and exiting inside poll
// spans (their /proc start times and the sampler's exit checks), pids reused, failed list and
// per-process utilization reads; the fold equals the rule integrated millisecond by millisecond.
#include "audit/attribute.hpp"
#include "audit/from_tick.hpp"
#include "identity/fake_proc.hpp"
#include "identity/resolver.hpp"
#include "sampler/fold.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace gua::sampler {
namespace held_property_test { // named after the file: unique in a unity batch

constexpr TimeUs k_t0 = 1767607200LL * k_us_per_second;
constexpr std::int64_t k_held_mib = 100;

/// A pid's fixed traits: its user and context type.
struct Pid {
    std::uint32_t pid;
    const char* user;
    telemetry::ProcessType type;
};
constexpr std::array<Pid, 5> k_pids{{{11, "a", telemetry::ProcessType::compute},
                                     {12, "b", telemetry::ProcessType::compute},
                                     {13, "c", telemetry::ProcessType::mps},
                                     {14, "a", telemetry::ProcessType::graphics},
                                     {15, "b", telemetry::ProcessType::compute}}};

struct PollPlan {
    DurationUs span = 0;
    double pct = 0;
    bool unknown = false;
    std::vector<std::pair<std::size_t, std::optional<std::int64_t>>> listed; ///< pid, memory
};

PollPlan random_poll(DurationUs span) {
    PollPlan p;
    p.span = span;
    p.pct = *rc::gen::element(0.0, 3.0, 9.99, 10.0, 55.0, 100.0);
    p.unknown = *rc::gen::inRange(0, 10) == 0;
    for (std::size_t i = 0; i < k_pids.size(); ++i) {
        if (*rc::gen::inRange(0, 3) == 0) {
            continue; // not listed: exited, not yet started, or taking turns
        }
        std::optional<std::int64_t> mib;
        if (*rc::gen::inRange(0, 12) != 0) {
            // Around the threshold most of the time, sometimes far above it.
            mib = *rc::gen::element<std::int64_t>(0, 40, 60, 90, 100, 101, 120, 20480);
        }
        p.listed.emplace_back(i, mib);
    }
    return p;
}

/// The truth, poll by poll, written from the rule in docs/measurement.md.
struct Truth {
    double active = 0, held = 0, truly_idle = 0, unknown = 0;
    std::map<std::string, double> held_by_user;
};

Truth integrate(const std::vector<PollPlan>& plan) {
    Truth t;
    for (const PollPlan& p : plan) {
        const auto span = static_cast<double>(p.span);
        if (p.unknown) {
            t.unknown += span; // who held or ran anything is unknown: flagged whole
            continue;
        }
        if (p.pct >= 10.0) {
            t.active += span;
            continue;
        }
        std::map<std::string, double> weight;
        double total = 0;
        bool unknown_memory = false;
        int holders = 0;
        for (const auto& [i, mib] : p.listed) {
            if (k_pids[i].type == telemetry::ProcessType::graphics) {
                continue;
            }
            ++holders;
            unknown_memory = unknown_memory || !mib;
            const double w = static_cast<double>(mib.value_or(k_held_mib));
            weight[k_pids[i].user] += w;
            total += w;
        }
        if (holders == 0 || (!unknown_memory && total <= static_cast<double>(k_held_mib))) {
            t.truly_idle += span;
            continue;
        }
        t.held += span;
        for (const auto& [i, mib] : p.listed) {
            if (k_pids[i].type != telemetry::ProcessType::graphics) {
                const double w = static_cast<double>(mib.value_or(k_held_mib));
                t.held_by_user[k_pids[i].user] += total > 0 ? span * w / total : span / holders;
            }
        }
    }
    return t;
}

telemetry::DevicePoll to_poll(const PollPlan& p) {
    telemetry::DevicePoll d;
    d.uuid = "GPU-a";
    d.util_source = telemetry::UtilSource::samples;
    d.util = {{p.pct, 1}};
    d.processes_unknown = p.unknown;
    for (const auto& [i, mib] : p.listed) {
        telemetry::ProcessReading r;
        r.pid = k_pids[i].pid;
        r.type = k_pids[i].type;
        r.mem_used_mib = mib;
        r.sm_util_pct = p.pct >= 10.0 ? std::optional<double>(p.pct) : 0.0;
        telemetry::Identity who;
        who.user = k_pids[i].user;
        r.identity = who;
        d.processes.push_back(r);
    }
    return d;
}

RC_GTEST_PROP(HeldProperty, PerPollDecisionEqualsTheTruthAndIdentitiesAddUp, ()) {
    // Polls of a 30 s tick, each at most 5 s (the last one takes what is left).
    std::vector<PollPlan> plan;
    DurationUs left = 30 * k_us_per_second;
    while (left > 0) {
        const DurationUs span = std::min<DurationUs>(
            left, *rc::gen::inRange<DurationUs>(k_us_per_ms, 5 * k_us_per_second + 1));
        plan.push_back(random_poll(span));
        left -= span;
    }
    identity::Resolver resolver{"/nonexistent-proc"};
    audit::Thresholds th;
    th.held_mib = k_held_mib;
    TickBuilder builder{th, resolver};
    const std::unordered_map<std::string, telemetry::DeviceInfo> devices{
        {"GPU-a", telemetry::DeviceInfo{"GPU-a", 0, "Card A", 81920, "", ""}}};
    builder.start(k_t0);
    for (const PollPlan& p : plan) {
        builder.add_poll({to_poll(p)}, p.span, devices);
    }
    const telemetry::Tick tick = builder.finish(0);
    RC_ASSERT(tick.cards.size() == 1U);
    const telemetry::CardTickRecord& card = tick.cards[0];
    audit::CardTick ct = audit::to_card_tick(tick, card);
    std::vector<std::string> users;
    for (std::size_t i = 0; i < card.processes.size(); ++i) {
        users.push_back(card.processes[i].identity.user);
        ct.processes[i].identity = static_cast<std::uint32_t>(i + 1);
    }
    const audit::StateTimes states = audit::classify(ct, th);
    const Truth truth = integrate(plan);
    const auto close = [&](DurationUs gua, double want) {
        return std::abs(static_cast<double>(gua) - want) <= static_cast<double>(plan.size()) + 1;
    };
    RC_ASSERT(states.total() == tick.duration_us);
    RC_ASSERT(close(states.active, truth.active));
    RC_ASSERT(close(states.idle_held, truth.held));
    RC_ASSERT(close(states.truly_idle, truth.truly_idle));
    RC_ASSERT(close(states.unmeasured, truth.unknown));

    std::vector<audit::IdentityShareUs> shares;
    audit::attribute_us(ct, states, th, 0, shares);
    DurationUs attributed = 0;
    std::map<std::string, DurationUs> held;
    for (const audit::IdentityShareUs& s : shares) {
        attributed += s.active_us + s.idle_held_us;
        if (s.identity > 0) {
            held[users[s.identity - 1]] += s.idle_held_us;
        }
    }
    RC_ASSERT(attributed == states.active + states.idle_held);
    for (const char* user : {"a", "b", "c"}) {
        const double want = truth.held_by_user.contains(user) ? truth.held_by_user.at(user) : 0.0;
        const DurationUs got = held.contains(user) ? held.at(user) : 0;
        RC_ASSERT(close(got, want));
    }
}

// ---- Histories at sub-poll resolution ----

constexpr std::int64_t k_ms = k_us_per_ms;
constexpr std::int64_t k_boot = 1000 * k_us_per_second; ///< boot time − monotonic time

/// One process's life: a pid (reused by later lives), its owner, when it lived (monotonic µs) and
/// whether the sampler's exit check saw it go.
struct Life {
    std::size_t pid; ///< index into k_pids (the type comes with it)
    std::string uid;
    std::int64_t start = 0;
    std::int64_t end = 0;
    bool exit_seen = true;
};

struct HistoryPoll {
    std::int64_t at = 0; ///< its instant (end of its span)
    DurationUs span = 0;
    double pct = 0;
    bool list_unknown = false;
    bool util_unknown = false;
    std::map<std::size_t, std::optional<std::int64_t>> memory; ///< by life: its memory now
};

struct History {
    std::vector<Life> lives;
    std::vector<std::vector<HistoryPoll>> ticks;
};

/// A value drawn uniformly from [lo, hi), whatever the case's size (inRange scales with it, and
/// a history of 1 ms lives would be enormous).
template <typename T> T uniform(T lo, T hi) {
    return *rc::gen::resize(100, rc::gen::inRange<T>(lo, hi));
}

History random_history() {
    History h;
    const int n_ticks = uniform<int>(1, 4);
    const std::int64_t total = n_ticks * 30 * k_us_per_second;
    // Lives per pid, one after another (pid reuse), starting and ending on a 10 ms grid (the
    // resolution of /proc start times) or on any millisecond.
    for (std::size_t pid = 0; pid < k_pids.size(); ++pid) {
        std::int64_t t = -uniform<std::int64_t>(0, 20) * k_us_per_second;
        while (t < total) {
            Life life;
            life.pid = pid;
            life.uid = std::to_string(61000 + uniform<int>(1, 4));
            life.start = t / (10 * k_ms) * (10 * k_ms);
            life.end = life.start + uniform<std::int64_t>(1, 40'000) * k_ms;
            life.exit_seen = uniform<int>(0, 4) != 0;
            t = life.end + uniform<std::int64_t>(1, 20'000) * k_ms;
            h.lives.push_back(life);
        }
    }
    std::int64_t at = 0;
    for (int k = 0; k < n_ticks; ++k) {
        std::vector<HistoryPoll>& polls = h.ticks.emplace_back();
        for (std::int64_t left = 30 * k_us_per_second; left > 0;) {
            HistoryPoll p;
            p.span = std::min<DurationUs>(left, uniform<std::int64_t>(1, 5001) * k_ms);
            left -= p.span;
            at += p.span;
            p.at = at;
            constexpr std::array<double, 4> k_pct{0.0, 5.0, 10.0, 100.0};
            p.pct = k_pct[uniform<std::size_t>(0, k_pct.size())];
            p.list_unknown = uniform<int>(0, 12) == 0;
            p.util_unknown = uniform<int>(0, 8) == 0;
            for (std::size_t i = 0; i < h.lives.size(); ++i) {
                if (h.lives[i].start <= at && at < h.lives[i].end) {
                    constexpr std::array<std::int64_t, 8> k_mib{0,   40,  60,  90,
                                                                100, 101, 120, 20480};
                    p.memory[i] = uniform<int>(0, 12) == 0
                                      ? std::nullopt
                                      : std::optional(k_mib[uniform<std::size_t>(0, k_mib.size())]);
                }
            }
            if (p.memory.empty() && p.pct >= 10.0) {
                // Active time with no process listed is split over the tick by the audit, not
                // decided per poll: outside this property.
                p.pct = 5.0;
            }
            polls.push_back(std::move(p));
        }
    }
    return h;
}

std::uint64_t start_ticks_of(const Life& life) {
    const auto per_s = static_cast<std::int64_t>(::sysconf(_SC_CLK_TCK));
    return static_cast<std::uint64_t>((life.start + k_boot) * per_s / k_us_per_second);
}

std::string user_of(const Life& life) {
    return "uid:" + life.uid;
}

/// The rule (docs/measurement.md) integrated millisecond by millisecond for one tick.
struct HistoryTruth {
    double active = 0, held = 0, truly_idle = 0, unknown = 0;
    std::map<std::string, double> active_by_user, held_by_user;
};

HistoryTruth integrate_tick(const History& h, const std::vector<HistoryPoll>& polls,
                            const HistoryPoll* before) {
    HistoryTruth t;
    for (const HistoryPoll& p : polls) {
        const HistoryPoll* previous = before;
        before = &p;
        const auto span = static_cast<double>(p.span);
        if (p.list_unknown) {
            t.unknown += span;
            continue;
        }
        if (p.pct >= 10.0) {
            if (p.util_unknown) {
                t.unknown += span;
                continue;
            }
            t.active += span;
            if (p.memory.empty()) {
                t.active_by_user["(no process)"] += span;
            }
            for (const auto& [i, mib] : p.memory) {
                t.active_by_user[user_of(h.lives[i])] +=
                    span / static_cast<double>(p.memory.size());
            }
            continue;
        }
        // Holders: those listed now from their start, those listed at the previous poll (read)
        // whose exit was seen inside the span until it.
        struct Holder {
            std::string user;
            double weight;
            bool known;
            std::int64_t from, to;
        };
        std::vector<Holder> holders;
        for (const auto& [i, mib] : p.memory) {
            const Life& l = h.lives[i];
            if (k_pids[l.pid].type != telemetry::ProcessType::graphics) {
                holders.push_back({user_of(l), static_cast<double>(mib.value_or(k_held_mib)),
                                   mib.has_value(), l.start, p.at});
            }
        }
        if (previous != nullptr && !previous->list_unknown) {
            for (const auto& [i, mib] : previous->memory) {
                const Life& l = h.lives[i];
                if (!p.memory.contains(i) && l.exit_seen && l.end < p.at &&
                    k_pids[l.pid].type != telemetry::ProcessType::graphics) {
                    holders.push_back({user_of(l), static_cast<double>(mib.value_or(k_held_mib)),
                                       mib.has_value(), p.at - p.span, l.end});
                }
            }
        }
        const double per_ms = span / static_cast<double>(p.span / k_ms);
        for (std::int64_t ms = p.at - p.span; ms < p.at; ms += k_ms) {
            const std::int64_t mid = ms + k_ms / 2;
            double total = 0;
            int n = 0;
            bool unknown_memory = false;
            for (const Holder& x : holders) {
                if (x.from < mid && mid < x.to) {
                    total += x.weight;
                    ++n;
                    unknown_memory = unknown_memory || !x.known;
                }
            }
            if (n == 0 || (!unknown_memory && total <= static_cast<double>(k_held_mib))) {
                t.truly_idle += per_ms;
                continue;
            }
            t.held += per_ms;
            for (const Holder& x : holders) {
                if (x.from < mid && mid < x.to) {
                    t.held_by_user[x.user] += total > 0 ? per_ms * x.weight / total : per_ms / n;
                }
            }
        }
    }
    return t;
}

telemetry::DevicePoll history_poll(const History& h, const HistoryPoll& p) {
    telemetry::DevicePoll d;
    d.uuid = "GPU-a";
    d.util_source = telemetry::UtilSource::samples;
    d.util = {{p.pct, 1}};
    d.processes_unknown = p.list_unknown;
    d.process_util_unknown = p.util_unknown;
    if (p.list_unknown) {
        return d;
    }
    for (const auto& [i, mib] : p.memory) {
        telemetry::ProcessReading r;
        r.pid = k_pids[h.lives[i].pid].pid;
        r.type = k_pids[h.lives[i].pid].type;
        r.mem_used_mib = mib;
        if (!p.util_unknown) {
            r.sm_util_pct = p.pct;
        }
        d.processes.push_back(r);
    }
    return d;
}

RC_GTEST_PROP(HeldProperty, HistoriesAtSubPollResolutionEqualTheRuleAndIdentitiesAddUp, ()) {
    const History h = random_history();
    identity::testing::FakeProc proc;
    RC_PRE(!proc.root().empty());
    identity::Resolver resolver{proc.root()};
    audit::Thresholds th;
    th.held_mib = k_held_mib;
    TickBuilder builder{th, resolver};
    const std::unordered_map<std::string, telemetry::DeviceInfo> devices{
        {"GPU-a", telemetry::DeviceInfo{"GPU-a", 0, "Card A", 81920, "", ""}}};
    std::map<std::size_t, std::size_t> current; ///< pid index → life whose files /proc shows
    const HistoryPoll* before = nullptr;
    std::int64_t checked = 0;
    for (std::size_t k = 0; k < h.ticks.size(); ++k) {
        builder.start(k_t0 + h.ticks[k].front().at - h.ticks[k].front().span);
        for (const HistoryPoll& p : h.ticks[k]) {
            for (const auto& [i, mib] : p.memory) {
                const auto it = current.find(h.lives[i].pid);
                if (it == current.end() || it->second != i) {
                    current[h.lives[i].pid] = i;
                    identity::testing::FakeProcess fp;
                    fp.uid = h.lives[i].uid;
                    fp.start_ticks = start_ticks_of(h.lives[i]);
                    proc.write(k_pids[h.lives[i].pid].pid, fp);
                }
            }
            std::vector<ProcessExit> exits;
            for (const Life& l : h.lives) {
                if (l.exit_seen && l.end > checked && l.end < p.at) {
                    exits.push_back({k_pids[l.pid].pid, start_ticks_of(l), l.end});
                }
            }
            checked = p.at;
            PollTimes times;
            times.end_mono_us = p.at;
            times.boot_offset_us = k_boot;
            times.exits = exits;
            builder.add_poll({history_poll(h, p)}, p.span, devices, times);
        }
        const telemetry::Tick tick = builder.finish(k);
        RC_ASSERT(tick.cards.size() == 1U);
        const telemetry::CardTickRecord& card = tick.cards[0];
        audit::CardTick ct = audit::to_card_tick(tick, card);
        for (std::size_t i = 0; i < card.processes.size(); ++i) {
            ct.processes[i].identity = static_cast<std::uint32_t>(i + 1);
        }
        const audit::StateTimes states = audit::classify(ct, th);
        const HistoryTruth truth = integrate_tick(h, h.ticks[k], before);
        before = &h.ticks[k].back();
        // A rounding µs per poll and per piece of a poll.
        const double slack = 2.0 * static_cast<double>(h.ticks[k].size() + h.lives.size()) + 1;
        const auto close = [&](DurationUs gua, double want) {
            return std::abs(static_cast<double>(gua) - want) <= slack;
        };
        RC_ASSERT(states.total() == tick.duration_us);
        RC_ASSERT(close(states.active, truth.active));
        RC_ASSERT(close(states.idle_held, truth.held));
        RC_ASSERT(close(states.truly_idle, truth.truly_idle));
        RC_ASSERT(close(states.unmeasured, truth.unknown));
        std::vector<audit::IdentityShareUs> shares;
        audit::attribute_us(ct, states, th, 0, shares);
        DurationUs attributed = 0;
        std::map<std::string, DurationUs> active, held;
        for (const audit::IdentityShareUs& s : shares) {
            attributed += s.active_us + s.idle_held_us;
            const std::string who =
                s.identity == 0 ? "(no process)" : card.processes[s.identity - 1].identity.user;
            active[who] += s.active_us;
            held[who] += s.idle_held_us;
        }
        RC_ASSERT(attributed == states.active + states.idle_held);
        std::map<std::string, bool> users;
        for (const auto& [who, x] : truth.active_by_user) {
            users[who] = true;
        }
        for (const auto& [who, x] : truth.held_by_user) {
            users[who] = true;
        }
        for (const auto& [who, x] : active) {
            users[who] = true;
        }
        for (const auto& [who, x] : held) {
            users[who] = true;
        }
        for (const auto& [who, unused] : users) {
            const auto want = [&](const std::map<std::string, double>& m) {
                return m.contains(who) ? m.at(who) : 0.0;
            };
            const auto got = [&](const std::map<std::string, DurationUs>& m) {
                return m.contains(who) ? m.at(who) : DurationUs{0};
            };
            RC_ASSERT(close(got(active), want(truth.active_by_user)));
            RC_ASSERT(close(got(held), want(truth.held_by_user)));
        }
    }
}

} // namespace held_property_test
} // namespace gua::sampler
