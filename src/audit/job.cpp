// SPDX-License-Identifier: Apache-2.0
// JobAccumulator and job notes (docs/allocations.md "Jobs").
#include "audit/job.hpp"

#include "core/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace gua::audit {

namespace {

/// The job's overlap with the tick and the overlap of every allocation in it.
std::pair<DurationUs, DurationUs> overlaps(const CardTick& tick,
                                           const std::vector<std::uint32_t>& job) {
    DurationUs mine = 0;
    DurationUs all = 0;
    for (const AllocationShare& s : tick.allocations) {
        all += s.overlap_us;
        if (std::find(job.begin(), job.end(), s.allocation) != job.end()) {
            mine += s.overlap_us;
        }
    }
    return {mine, all};
}

std::int64_t held_mib(const CardTick& tick) {
    std::int64_t sum = 0;
    for (const ProcTick& p : tick.processes) {
        sum += p.mem_used_mib.value_or(0);
    }
    return sum;
}

} // namespace

std::size_t JobSummary::used_cards() const {
    return static_cast<std::size_t>(
        std::count_if(cards.begin(), cards.end(), [](const JobCard& c) { return c.used(); }));
}

JobAccumulator::JobAccumulator(std::vector<std::uint32_t> allocations, const Thresholds& thresholds)
    : m_allocations(std::move(allocations)), m_thresholds(thresholds) {}

void JobAccumulator::add(const CardTick& tick) {
    const auto [mine, all] = overlaps(tick, m_allocations);
    if (mine <= 0 || all <= 0) {
        return;
    }
    const StateTimes states = classify(tick, m_thresholds);
    add_allocation_shares(tick, tick_allocation(tick, states).matrix, m_totals);
    // The job's part of the card's allocated time in this tick, for what is not a time split.
    const double f = static_cast<double>(mine) / static_cast<double>(all);
    const telemetry::AllocationTimes& a = tick.allocation;
    Extra& x = m_extra[tick.gpu];
    x.card.gpu = tick.gpu;
    const double measured = f * static_cast<double>(a.active_us + a.idle_held_us + a.unused_us);
    if (tick.util_pct && measured > 0) {
        x.measured += measured;
        x.sm_weighted += *tick.util_pct * measured;
        x.card.peak_sm_pct = std::max(x.card.peak_sm_pct.value_or(0.0), *tick.util_pct);
    }
    if (!tick.processes.empty()) {
        x.card.peak_mem_mib = std::max(x.card.peak_mem_mib.value_or(0), held_mib(tick));
    }
    if (tick.readings.energy_mj && tick.duration_us > 0) {
        x.has_energy = true;
        x.energy_j += static_cast<double>(*tick.readings.energy_mj) / 1000.0 * f *
                      static_cast<double>(a.allocated_us) / static_cast<double>(tick.duration_us);
    }
}

namespace {

void add_to_total(const JobCard& c, JobCard& t) {
    t.allocated_us += c.allocated_us;
    t.active_us += c.active_us;
    t.idle_held_us += c.idle_held_us;
    t.unused_us += c.unused_us;
    t.unmeasured_us += c.unmeasured_us;
    if (c.peak_sm_pct) {
        t.peak_sm_pct = std::max(t.peak_sm_pct.value_or(0.0), *c.peak_sm_pct);
    }
    if (c.peak_mem_mib) {
        t.peak_mem_mib = std::max(t.peak_mem_mib.value_or(0), *c.peak_mem_mib);
    }
    if (c.energy_j) {
        t.energy_j = t.energy_j.value_or(0.0) + *c.energy_j;
    }
}

} // namespace

JobSummary JobAccumulator::finish() const {
    AllocationTotals job;
    for (const std::uint32_t index : m_allocations) {
        if (index < m_totals.size()) {
            job += m_totals[index];
        }
    }
    JobSummary out;
    out.allocations = m_allocations;
    double measured = 0;
    double sm_weighted = 0;
    for (const auto& [gpu, x] : m_extra) {
        JobCard c = x.card;
        const auto time =
            std::find_if(job.by_gpu.begin(), job.by_gpu.end(),
                         [gpu = gpu](const AllocationGpuTime& g) { return g.gpu == gpu; });
        if (time != job.by_gpu.end()) {
            c.allocated_us = time->allocated_us;
            c.active_us = time->active_us;
            c.idle_held_us = time->idle_held_us;
            c.unused_us = time->unused_us;
        }
        c.unmeasured_us =
            std::max<DurationUs>(c.allocated_us - c.active_us - c.idle_held_us - c.unused_us, 0);
        if (x.measured > 0) {
            c.mean_sm_pct = x.sm_weighted / x.measured;
        }
        if (x.has_energy) {
            c.energy_j = x.energy_j;
        }
        measured += x.measured;
        sm_weighted += x.sm_weighted;
        add_to_total(c, out.total);
        out.cards.push_back(c);
    }
    if (measured > 0) {
        out.total.mean_sm_pct = sm_weighted / measured;
    }
    return out;
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
