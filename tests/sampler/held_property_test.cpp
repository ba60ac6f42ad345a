// SPDX-License-Identifier: Apache-2.0
// Property: over random histories of one 30 s tick polled every ≤ 5 s — holders appearing and
// exiting, taking turns, memory hovering at the held threshold, unknown memory, graphics
// contexts, failed process-list reads — the card-tick's idle-held / truly idle / unknown time and
// each user's idle-held time equal the truth integrated poll by poll (to a rounding µs per poll),
// and identity time adds up exactly to the card's active + idle-held time.
#include "audit/attribute.hpp"
#include "audit/from_tick.hpp"
#include "identity/resolver.hpp"
#include "sampler/fold.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <array>
#include <cmath>
#include <map>
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

} // namespace held_property_test
} // namespace gua::sampler
