// SPDX-License-Identifier: Apache-2.0
// JobAccumulator and job notes (docs/allocations.md "Jobs").
#include "audit/job.hpp"

#include "core/units.hpp"
#include "telemetry/card_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

namespace gua::audit {

namespace {

std::int64_t held_mib(const CardTick& tick) {
    std::int64_t sum = 0;
    for (const ProcTick& p : tick.processes) {
        sum += p.mem_used_mib.value_or(0);
    }
    return sum;
}

/// Each allocation's part of the tick's allocated time and cells, by its position in
/// tick.allocations: add_allocation_shares on a tick whose shares are renumbered 0, 1, … (so the
/// parts are the integers the report gives each allocation).
std::vector<AllocationGpuTime> parts_of(const CardTick& tick, const AllocationMatrix& cells) {
    CardTick t;
    t.gpu = tick.gpu;
    t.allocation.allocated_us = tick.allocation.allocated_us;
    for (std::size_t i = 0; i < tick.allocations.size(); ++i) {
        t.allocations.push_back(
            AllocationShare{static_cast<std::uint32_t>(i), tick.allocations[i].overlap_us});
    }
    std::vector<AllocationTotals> totals(t.allocations.size());
    add_allocation_shares(t, cells, totals);
    std::vector<AllocationGpuTime> out(t.allocations.size(), AllocationGpuTime{tick.gpu});
    for (std::size_t i = 0; i < totals.size(); ++i) {
        if (!totals[i].by_gpu.empty()) {
            out[i] = totals[i].by_gpu.front();
        }
    }
    return out;
}

/// Membership of allocation indexes: one flag per index (a window may hold thousands).
std::vector<char> mask_of(const std::vector<std::uint32_t>& allocations) {
    std::vector<char> mask;
    for (const std::uint32_t a : allocations) {
        if (mask.size() <= a) {
            mask.resize(a + 1, 0);
        }
        mask[a] = 1;
    }
    return mask;
}

bool counts(const std::vector<char>& job, const std::map<std::uint32_t, TimeUs>& start,
            std::uint32_t allocation, TimeUs t0) {
    if (allocation >= job.size() || job[allocation] == 0) {
        return false;
    }
    const auto it = start.find(allocation);
    return it == start.end() || t0 >= it->second;
}

template <class T> void keep_max(std::optional<T>& into, const std::optional<T>& v) {
    if (v) {
        into = into ? std::max(*into, *v) : *v;
    }
}

} // namespace

JobPartial& JobPartial::operator+=(const JobPartial& o) {
    allocated_us += o.allocated_us;
    active_us += o.active_us;
    idle_held_us += o.idle_held_us;
    unused_us += o.unused_us;
    measured_us += o.measured_us;
    sm_weighted += o.sm_weighted;
    keep_max(peak_sm_pct, o.peak_sm_pct);
    keep_max(peak_mem_mib, o.peak_mem_mib);
    if (o.energy_j) {
        energy_j = energy_j.value_or(0.0) + *o.energy_j;
    }
    return *this;
}

std::size_t JobSummary::used_cards() const {
    return static_cast<std::size_t>(
        std::count_if(cards.begin(), cards.end(), [](const JobCard& c) { return c.used(); }));
}

JobAccumulator::JobAccumulator(std::vector<std::uint32_t> allocations, const Thresholds& thresholds)
    : m_allocations(std::move(allocations)), m_mask(mask_of(m_allocations)),
      m_thresholds(thresholds) {}

void JobAccumulator::add(const CardTick& tick) {
    DurationUs all = 0;
    bool mine = false;
    for (const AllocationShare& s : tick.allocations) {
        all += std::max<DurationUs>(s.overlap_us, 0);
        mine = mine || (s.overlap_us > 0 && counts(m_mask, m_start, s.allocation, tick.t0));
    }
    if (!mine || all <= 0) {
        return;
    }
    const StateTimes states = classify(tick, m_thresholds);
    const std::vector<AllocationGpuTime> parts =
        parts_of(tick, tick_allocation(tick, states).matrix);
    const telemetry::AllocationTimes& a = tick.allocation;
    for (std::size_t i = 0; i < tick.allocations.size(); ++i) {
        const AllocationShare& s = tick.allocations[i];
        if (s.overlap_us <= 0 || !counts(m_mask, m_start, s.allocation, tick.t0)) {
            continue;
        }
        if (m_totals.size() <= s.allocation) {
            m_totals.resize(s.allocation + 1);
        }
        m_totals[s.allocation] += AllocationTotals{{parts[i]}};
        // This allocation's part of the card's allocated time, for what is not a time split.
        const double f = static_cast<double>(s.overlap_us) / static_cast<double>(all);
        JobPartial& x = m_extra[{s.allocation, tick.gpu}];
        const double measured = f * static_cast<double>(a.active_us + a.idle_held_us + a.unused_us);
        if (tick.util_pct && measured > 0) {
            x.measured_us += measured;
            x.sm_weighted += *tick.util_pct * measured;
            keep_max(x.peak_sm_pct, tick.util_pct);
        }
        if (!tick.processes.empty()) {
            keep_max(x.peak_mem_mib, std::optional<std::int64_t>(held_mib(tick)));
        }
        if (tick.readings.energy_mj && tick.duration_us > 0) {
            x.energy_j = x.energy_j.value_or(0.0) + static_cast<double>(*tick.readings.energy_mj) /
                                                        1000.0 * f *
                                                        static_cast<double>(a.allocated_us) /
                                                        static_cast<double>(tick.duration_us);
        }
    }
}

JobPartials JobAccumulator::partials() const {
    JobPartials out = m_extra;
    for (std::uint32_t a = 0; a < m_totals.size(); ++a) {
        for (const AllocationGpuTime& g : m_totals[a].by_gpu) {
            JobPartial& p = out[{a, g.gpu}];
            p.allocated_us = g.allocated_us;
            p.active_us = g.active_us;
            p.idle_held_us = g.idle_held_us;
            p.unused_us = g.unused_us;
        }
    }
    return out;
}

namespace {

void add_to_total(const JobCard& c, JobCard& t) {
    t.allocated_us += c.allocated_us;
    t.active_us += c.active_us;
    t.idle_held_us += c.idle_held_us;
    t.unused_us += c.unused_us;
    t.unmeasured_us += c.unmeasured_us;
    keep_max(t.peak_sm_pct, c.peak_sm_pct);
    keep_max(t.peak_mem_mib, c.peak_mem_mib);
    if (c.energy_j) {
        t.energy_j = t.energy_j.value_or(0.0) + *c.energy_j;
    }
}

} // namespace

JobSummary summarize_job(const JobPartials& parts) {
    std::map<std::uint32_t, JobPartial> by_gpu;
    std::set<std::uint32_t> allocations;
    for (const auto& [key, p] : parts) {
        by_gpu[key.second] += p;
        allocations.insert(key.first);
    }
    JobSummary out;
    out.allocations.assign(allocations.begin(), allocations.end());
    double measured = 0;
    double sm_weighted = 0;
    for (const auto& [gpu, p] : by_gpu) {
        JobCard c;
        c.gpu = gpu;
        c.allocated_us = p.allocated_us;
        c.active_us = p.active_us;
        c.idle_held_us = p.idle_held_us;
        c.unused_us = p.unused_us;
        c.unmeasured_us =
            std::max<DurationUs>(c.allocated_us - c.active_us - c.idle_held_us - c.unused_us, 0);
        if (p.measured_us > 0) {
            c.mean_sm_pct = p.sm_weighted / p.measured_us;
        }
        c.peak_sm_pct = p.peak_sm_pct;
        c.peak_mem_mib = p.peak_mem_mib;
        c.energy_j = p.energy_j;
        measured += p.measured_us;
        sm_weighted += p.sm_weighted;
        add_to_total(c, out.total);
        out.cards.push_back(c);
    }
    if (measured > 0) {
        out.total.mean_sm_pct = sm_weighted / measured;
    }
    return out;
}

JobSummary JobAccumulator::finish() const {
    JobSummary out = summarize_job(partials());
    out.allocations = m_allocations;
    return out;
}

JobSlicer::JobSlicer(std::vector<std::uint32_t> allocations, const Thresholds& thresholds,
                     TimeUs begin_us)
    : m_mask(mask_of(allocations)), m_thresholds(thresholds), m_begin_us(begin_us) {}

namespace {

DurationUs scaled(DurationUs us, double f) {
    return static_cast<DurationUs>(std::llround(static_cast<double>(us) * f));
}

double ratio(DurationUs part, DurationUs whole) {
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

/// Sets the slice's own times from the job's part `p` of the tick (classify() then gives back
/// exactly p's active, idle-held and allocated-unused times).
void set_times(const CardTick& tick, const StateTimes& states, const AllocationGpuTime& p,
               CardTick& out) {
    const DurationUs measured = p.active_us + p.idle_held_us + p.unused_us;
    DurationUs bucket_sum = 0;
    for (const DurationUs b : tick.bucket_us) {
        bucket_sum += b;
    }
    const double fb = ratio(measured, bucket_sum);
    for (DurationUs& b : out.bucket_us) {
        b = scaled(b, fb);
    }
    if (out.active_us) {
        out.active_us = p.active_us;
    }
    out.unmeasured_us = std::max<DurationUs>(p.allocated_us - measured, 0);
    out.idle_unknown_us = 0;
    out.idle_unlisted_us = p.unused_us;
    const double fa = ratio(p.active_us, states.active);
    const double fh = ratio(p.idle_held_us, states.idle_held);
    for (ProcTick& proc : out.processes) {
        if (proc.active_us) {
            proc.active_us = scaled(*proc.active_us, fa);
        }
        if (proc.idle_held_us) {
            proc.idle_held_us = scaled(*proc.idle_held_us, fh);
        }
    }
    out.allocation =
        telemetry::AllocationTimes{p.allocated_us, p.active_us, p.idle_held_us, p.unused_us, 0, 0};
    const double fd = ratio(p.allocated_us, tick.duration_us);
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        std::optional<std::int64_t>& v = out.readings.*f.value;
        if (v && (f.fold == telemetry::Fold::counter || f.fold == telemetry::Fold::event_time)) {
            v = scaled(*v, fd);
        }
    }
}

} // namespace

bool JobSlicer::slice(const CardTick& tick, CardTick& out) const {
    const bool mine = std::any_of(
        tick.allocations.begin(), tick.allocations.end(), [&](const AllocationShare& s) {
            return s.overlap_us > 0 && counts(m_mask, {}, s.allocation, tick.t0);
        });
    if (!mine) {
        return false;
    }
    const StateTimes states = classify(tick, m_thresholds);
    const std::vector<AllocationGpuTime> parts =
        parts_of(tick, tick_allocation(tick, states).matrix);
    AllocationGpuTime job{tick.gpu};
    std::vector<AllocationShare> shares;
    for (std::size_t i = 0; i < tick.allocations.size(); ++i) {
        const AllocationShare& s = tick.allocations[i];
        if (s.overlap_us > 0 && counts(m_mask, {}, s.allocation, tick.t0)) {
            job.allocated_us += parts[i].allocated_us;
            job.active_us += parts[i].active_us;
            job.idle_held_us += parts[i].idle_held_us;
            job.unused_us += parts[i].unused_us;
            shares.push_back(AllocationShare{s.allocation, parts[i].allocated_us});
        }
    }
    if (job.allocated_us <= 0) {
        return false;
    }
    out = tick;
    out.duration_us = job.allocated_us;
    out.t0 = std::min(std::max(tick.t0, m_begin_us),
                      tick.t0 + std::max<DurationUs>(tick.duration_us - job.allocated_us, 0));
    out.allocations = std::move(shares);
    set_times(tick, states, job, out);
    return true;
}

std::optional<std::int64_t> smallest_mig_slice_gib(std::string_view model,
                                                   std::int64_t memory_total_mib) {
    static constexpr std::array<std::string_view, 6> k_mig_models{"A100", "A30",  "H100",
                                                                  "H200", "B200", "H20"};
    const bool mig = std::any_of(k_mig_models.begin(), k_mig_models.end(),
                                 [&](std::string_view m) { return model.find(m) != model.npos; });
    if (!mig || memory_total_mib <= 0) {
        return std::nullopt;
    }
    const double parts = model.find("A30") != model.npos ? 4.0 : 8.0;
    return std::llround(static_cast<double>(memory_total_mib) / 1024.0 / parts);
}

namespace {

std::string percent(DurationUs part, DurationUs whole) {
    return fmt::format("{:.0f} %", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

void note_unused_cards(const JobSummary& job, std::vector<std::string>& out) {
    const std::size_t used = job.used_cards();
    if (used == job.cards.size()) {
        return;
    }
    if (job.cards.size() == 1) {
        out.push_back("its GPU was never active: ask for no GPU, or find why it does not run");
        return;
    }
    out.push_back(fmt::format("used {} of {} allocated GPUs: ask for {} (--gres=gpu:{})", used,
                              job.cards.size(), std::max<std::size_t>(used, 1),
                              std::max<std::size_t>(used, 1)));
}

void note_blocked(const JobSummary& job, std::vector<std::string>& out) {
    const JobCard& t = job.total;
    if (t.allocated_us <= 0 || 5 * (t.idle_held_us + t.unused_us) < t.allocated_us) {
        return;
    }
    // A part that rounds to 0 % is left out.
    std::string parts;
    if (200 * t.idle_held_us >= t.allocated_us) {
        parts = fmt::format("idle-held {}", percent(t.idle_held_us, t.allocated_us));
    }
    if (200 * t.unused_us >= t.allocated_us) {
        parts += fmt::format("{}allocated-unused {}", parts.empty() ? "" : " and ",
                             percent(t.unused_us, t.allocated_us));
    }
    out.push_back(fmt::format("{} of its allocated GPU time (the 20 % rule)", parts));
}

void note_mig(const JobSummary& job, const std::map<std::uint32_t, JobCardModel>& models,
              std::vector<std::string>& out) {
    for (const JobCard& c : job.cards) {
        const auto it = models.find(c.gpu);
        if (!c.used() || !c.peak_mem_mib || it == models.end() || !it->second.memory_total_mib) {
            continue;
        }
        const auto slice = smallest_mig_slice_gib(it->second.name, *it->second.memory_total_mib);
        if (!slice || *c.peak_mem_mib > *slice * 1024) {
            continue;
        }
        out.push_back(fmt::format("peak memory {} of {} on GPU {} — a 1g.{}gb MIG slice would do",
                                  format_gib(static_cast<double>(*c.peak_mem_mib)),
                                  format_gib(static_cast<double>(*it->second.memory_total_mib)),
                                  it->second.index, *slice));
    }
}

} // namespace

std::vector<std::string> job_notes(const JobSummary& job,
                                   const std::map<std::uint32_t, JobCardModel>& models) {
    std::vector<std::string> out;
    note_unused_cards(job, out);
    note_blocked(job, out);
    note_mig(job, models, out);
    return out;
}

} // namespace gua::audit
