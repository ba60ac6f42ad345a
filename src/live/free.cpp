// SPDX-License-Identifier: Apache-2.0
// `gua free`'s verdict on one card: the truly idle stretch ending at its newest card-tick, then
// its free memory.
#include "live/free.hpp"

#include "core/duration.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gua::live {

namespace {

/// What stopped a truly idle stretch: a reason code and its words.
struct Break {
    std::string reason;
    std::string what;
};

Break break_of(const audit::StateTimes& t) {
    if (t.active > 0) {
        return {"active", "active"};
    }
    if (t.idle_held > 0) {
        return {"idle-held", "held idle by a process"};
    }
    if (t.allocated_unused > 0) {
        return {"allocated", "allocated"};
    }
    return {"unmeasured", "unmeasured"};
}

/// Who makes the newest card-tick not free, in words, e.g. "held by alice (pid 42, 8000 MiB)".
std::string who_now(const telemetry::CardTickRecord& r, const std::string& reason) {
    if (reason == "allocated" && !r.allocations.empty()) {
        const telemetry::AllocationOwner& a = r.allocations.back();
        return fmt::format("allocated to {} {}{}", a.kind, a.id,
                           a.user.empty() ? "" : " (" + a.user + ")");
    }
    if ((reason == "active" || reason == "idle-held") && !r.processes.empty()) {
        const auto top = std::max_element(
            r.processes.begin(), r.processes.end(), [](const auto& a, const auto& b) {
                return a.mem_used_mib.value_or(0) < b.mem_used_mib.value_or(0);
            });
        const std::string user = top->identity.user.empty() ? "?" : top->identity.user;
        const std::string mem =
            top->mem_used_mib ? fmt::format(", {} MiB", *top->mem_used_mib) : std::string();
        return fmt::format("{} now, by {} (pid {}{})", reason == "active" ? "active" : "held idle",
                           user, top->pid, mem);
    }
    return reason == "unmeasured" ? "not measured now" : reason + " now";
}

void judge_memory(FreeCard& c, const telemetry::CardTickRecord& r, const FreeAsk& ask) {
    const std::optional<std::int64_t> total =
        r.readings.mem_total_mib ? r.readings.mem_total_mib : r.device.memory_total_mib;
    c.memory_total_mib = total;
    if (total && r.readings.mem_used_mib) {
        c.memory_free_mib = std::max<std::int64_t>(
            *total - *r.readings.mem_used_mib - r.readings.mem_reserved_mib.value_or(0), 0);
    }
    if (!c.free || !ask.min_memory_mib) {
        return;
    }
    c.free = false;
    if (!c.memory_free_mib) {
        c.reason = "memory-unknown";
        c.detail = "free memory not known";
    } else if (*c.memory_free_mib < *ask.min_memory_mib) {
        c.reason = "memory";
        c.detail =
            fmt::format("{} MiB free, {} MiB asked", *c.memory_free_mib, *ask.min_memory_mib);
    } else {
        c.free = true;
    }
}

} // namespace

std::vector<int> FreeModel::free_indices() const {
    std::vector<int> out;
    for (const FreeCard& g : gpus) {
        if (g.free) {
            out.push_back(g.index);
        }
    }
    return out;
}

bool is_truly_idle(const audit::StateTimes& t, DurationUs duration_us) {
    return t.active == 0 && t.idle_held == 0 && t.allocated_unused == 0 &&
           t.unmeasured * 100 <= duration_us;
}

FreeCard judge_card(const telemetry::CardTickRecord& newest,
                    const std::vector<audit::StateSpan>& spans, const FreeAsk& ask) {
    FreeCard c{newest.device.index, newest.device.uuid, newest.device.name, false, "", "", 0,
               std::nullopt,        std::nullopt};
    if (spans.empty()) {
        c.reason = "unmeasured";
        c.detail = "nothing recorded";
        judge_memory(c, newest, ask);
        return c;
    }
    const TimeUs end = spans.back().t0 + spans.back().duration_us;
    TimeUs start = end;
    std::optional<Break> broke;
    for (auto it = spans.rbegin();
         it != spans.rend() && (it == spans.rbegin() || start > end - ask.for_us); ++it) {
        const TimeUs span_end = it->t0 + it->duration_us;
        if (span_end < start - std::max<DurationUs>(it->duration_us / 100, 0)) {
            broke = Break{"unmeasured", "not recorded"};
            break;
        }
        if (!is_truly_idle(it->times, it->duration_us)) {
            broke = break_of(it->times);
            break;
        }
        start = std::min(start, it->t0);
    }
    c.truly_idle_us = end - start;
    if (c.truly_idle_us >= ask.for_us && c.truly_idle_us > 0) {
        c.free = true;
    } else if (c.truly_idle_us == 0 && broke) {
        c.reason = broke->reason;
        c.detail = who_now(newest, broke->reason);
    } else {
        const Break b = broke.value_or(Break{"unmeasured", "not recorded"});
        c.reason = b.reason;
        c.detail =
            fmt::format("truly idle for {} only, {} asked ({} before)",
                        format_duration(c.truly_idle_us), format_duration(ask.for_us), b.what);
    }
    judge_memory(c, newest, ask);
    return c;
}

} // namespace gua::live
