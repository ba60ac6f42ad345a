// SPDX-License-Identifier: Apache-2.0
// Concurrency percentiles, wait percentiles and the capacity search.
#include "plan/capacity.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace gua::plan {

Concurrency concurrency_of(const std::vector<Step>& steps, const std::vector<Phase>& recorded) {
    std::map<int, DurationUs> time_at; // count → recorded time at it
    std::size_t s = 0;                 // the first step after the current time
    for (const Phase& r : recorded) {
        TimeUs t = r.begin;
        while (s < steps.size() && steps[s].t <= t) {
            ++s;
        }
        while (t < r.end) {
            const int count = s == 0 ? 0 : steps[s - 1].count;
            const TimeUs until = s < steps.size() ? std::min(r.end, steps[s].t) : r.end;
            time_at[count] += until - t;
            t = until;
            while (s < steps.size() && steps[s].t <= t) {
                ++s;
            }
        }
    }
    DurationUs total = 0;
    for (const auto& [c, d] : time_at) {
        total += d;
    }
    Concurrency out;
    if (total == 0) {
        return out;
    }
    auto quantile = [&](double q) {
        DurationUs seen = 0;
        for (const auto& [c, d] : time_at) {
            seen += d;
            if (static_cast<double>(seen) >= q * static_cast<double>(total)) {
                return c;
            }
        }
        return time_at.rbegin()->first;
    };
    out.peak = time_at.rbegin()->first;
    out.p99 = quantile(0.99);
    out.p95 = quantile(0.95);
    return out;
}

DurationUs nearest_rank(const std::vector<DurationUs>& sorted, double q) {
    const auto n = static_cast<double>(sorted.size());
    const auto rank = static_cast<std::size_t>(std::max(1.0, std::ceil(q * n)));
    return sorted[std::min(rank, sorted.size()) - 1];
}

namespace {

Waits waits_of(std::vector<DurationUs> w, std::int64_t never) {
    Waits out;
    out.count = static_cast<std::int64_t>(w.size()) + never;
    out.never_started = never;
    if (w.empty()) {
        return out;
    }
    std::sort(w.begin(), w.end());
    out.p50_us = nearest_rank(w, 0.50);
    out.p95_us = nearest_rank(w, 0.95);
    out.max_us = w.back();
    return out;
}

/// How many waits above the objective a class of `n` requests may have with its nearest-rank
/// p95 still within it.
std::int64_t allowed_misses(std::int64_t n) {
    return n - static_cast<std::int64_t>(std::ceil(0.95 * static_cast<double>(n)));
}

bool meets(const Waits& w, DurationUs objective) {
    return w.never_started == 0 && (!w.p95_us || *w.p95_us <= objective);
}

/// Whether a replay on `gpus` cards meets the objective, stopping as soon as it cannot.
bool quick_check(const std::vector<Request>& requests, Capacity card, int gpus, int per_host,
                 const Objective& objective) {
    std::int64_t n_interactive = 0;
    for (const Request& r : requests) {
        n_interactive += r.interactive ? 1 : 0;
    }
    const std::int64_t n_batch = static_cast<std::int64_t>(requests.size()) - n_interactive;
    std::int64_t left_interactive = allowed_misses(n_interactive);
    std::int64_t left_batch = allowed_misses(n_batch);
    const Replay r = replay(requests, card, gpus, per_host, [&](bool interactive, DurationUs w) {
        if (interactive) {
            return w > objective.interactive_us && --left_interactive < 0;
        }
        return w > objective.batch_us && --left_batch < 0;
    });
    return !r.stopped;
}

} // namespace

Fit fit_on(const std::vector<Request>& requests, Capacity card, int gpus, int per_host,
           const Objective& objective) {
    const Replay r = replay(requests, card, gpus, per_host, [](bool, DurationUs) { return false; });
    std::vector<DurationUs> interactive;
    std::vector<DurationUs> batch;
    std::int64_t never_interactive = 0;
    std::int64_t never_batch = 0;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const bool inter = requests[i].interactive;
        if (r.waits[i]) {
            (inter ? interactive : batch).push_back(*r.waits[i]);
        } else {
            ++(inter ? never_interactive : never_batch);
        }
    }
    Fit out;
    out.gpus = gpus;
    out.interactive = waits_of(std::move(interactive), never_interactive);
    out.batch = waits_of(std::move(batch), never_batch);
    out.met =
        meets(out.interactive, objective.interactive_us) && meets(out.batch, objective.batch_us);
    return out;
}

Fit capacity_search(const std::vector<Request>& requests, Capacity card, int per_host, int lo,
                    int hint, int limit, const Objective& objective) {
    lo = std::max(lo, 1);
    if (requests.empty()) {
        return fit_on(requests, card, 0, per_host, objective);
    }
    int hi = std::max(lo, hint);
    while (!quick_check(requests, card, hi, per_host, objective)) {
        if (hi >= limit) {
            return fit_on(requests, card, limit, per_host, objective);
        }
        lo = hi + 1;
        hi = std::min(limit, hi * 2);
    }
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (quick_check(requests, card, mid, per_host, objective)) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return fit_on(requests, card, hi, per_host, objective);
}

} // namespace gua::plan
