// SPDX-License-Identifier: Apache-2.0
// WindowAccumulator: the single place where card-ticks (or hourly rollups of them) become window
// totals.
#include "audit/window.hpp"

#include "audit/rescale.hpp"

#include <algorithm>
#include <cmath>

namespace gua::audit {

namespace {

constexpr DurationUs k_quarter_us = 15 * k_us_per_minute;

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    return a / b - (a % b < 0 ? 1 : 0);
}

DurationUs allowed_gap(DurationUs duration_us) {
    return std::max<DurationUs>(2 * duration_us, k_us_per_minute);
}

/// Where a card-tick's time came from: its measured time by utilization source, and why the
/// rest is unmeasured (no reading, utilization, holders or allocation unknown).
void add_provenance(const CardTick& tick, const StateTimes& states, Provenance& provenance) {
    provenance.util_unknown_us += states.unmeasured;
    if (!tick.active_us) {
        provenance.no_reading_us += states.unmeasured;
        return;
    }
    // classify() takes the unknown-holders part out of what unknown utilization left.
    const DurationUs util_unknown =
        std::min(std::max<DurationUs>(tick.unmeasured_us, 0), states.unmeasured);
    // The rest is holders unknown, then allocation unknown (classify's order).
    const DurationUs rest = states.unmeasured - util_unknown;
    const DurationUs holders = std::min(std::max<DurationUs>(tick.idle_unknown_us, 0), rest);
    provenance.holders_unknown_us += holders;
    provenance.allocation_unknown_us += rest - holders;
    provenance.util_unknown_us -= rest;
    provenance.by_source_us[static_cast<std::size_t>(tick.util_source) %
                            provenance.by_source_us.size()] += states.total() - util_unknown;
}

/// What every identity's share of one card-tick is weighed with.
struct TickWeights {
    const TickAllocation& allocation;
    std::optional<TickEnergy> energy;
    std::optional<double> load;
    DurationUs total_us = 0; ///< the tick's classified time
    std::uint32_t gpu = 0;
};

/// Adds an identity's share of a card-tick to its totals.
void add_share(IdentityTotals& id, const IdentityShareUs& s, const TickWeights& w) {
    id.active_us += s.active_us;
    id.idle_held_us += s.idle_held_us;
    id.idle_held_mib_ms += s.idle_held_mib_us / 1000;
    id.unallocated_active_us +=
        std::llround(static_cast<double>(s.active_us) * w.allocation.unallocated_active_share);
    id.unallocated_idle_held_us += std::llround(static_cast<double>(s.idle_held_us) *
                                                w.allocation.unallocated_idle_held_share);
    if (w.energy) {
        const DurationUs attributed = s.active_us + s.idle_held_us;
        id.health.energy_mj += energy_part_mj(w.energy->mj, attributed, w.total_us);
        id.health.energy_us += attributed;
    }
    if (w.load) {
        id.health.load[load_bin(*w.load)] += s.active_us;
    }
    auto on_gpu = std::find_if(id.by_gpu.begin(), id.by_gpu.end(),
                               [&](const IdentityGpuTime& g) { return g.gpu == w.gpu; });
    if (on_gpu == id.by_gpu.end()) {
        on_gpu = id.by_gpu.insert(id.by_gpu.end(), IdentityGpuTime{w.gpu});
    }
    on_gpu->active_us += s.active_us;
    on_gpu->idle_held_us += s.idle_held_us;
}

} // namespace

IdentityTotals& IdentityTotals::operator+=(const IdentityTotals& o) {
    active_us += o.active_us;
    idle_held_us += o.idle_held_us;
    idle_held_mib_ms += o.idle_held_mib_ms;
    ticks += o.ticks;
    holder_ticks += o.holder_ticks;
    health += o.health;
    unallocated_active_us += o.unallocated_active_us;
    unallocated_idle_held_us += o.unallocated_idle_held_us;
    for (const IdentityGpuTime& g : o.by_gpu) {
        auto on_gpu = std::find_if(by_gpu.begin(), by_gpu.end(),
                                   [&](const IdentityGpuTime& x) { return x.gpu == g.gpu; });
        if (on_gpu == by_gpu.end()) {
            on_gpu = by_gpu.insert(by_gpu.end(), IdentityGpuTime{g.gpu});
        }
        on_gpu->active_us += g.active_us;
        on_gpu->idle_held_us += g.idle_held_us;
    }
    return *this;
}

Provenance& Provenance::operator+=(const Provenance& o) {
    for (std::size_t s = 0; s < by_source_us.size(); ++s) {
        by_source_us[s] += o.by_source_us[s];
    }
    util_unknown_us += o.util_unknown_us;
    holders_unknown_us += o.holders_unknown_us;
    no_reading_us += o.no_reading_us;
    allocation_unknown_us += o.allocation_unknown_us;
    return *this;
}

GpuTotals& GpuTotals::operator+=(const GpuTotals& o) {
    states += o.states;
    provenance += o.provenance;
    ticks += o.ticks;
    overlap_us += o.overlap_us;
    for (std::size_t b = 0; b < k_bucket_count; ++b) {
        bucket_us[b] += o.bucket_us[b];
    }
    for (std::size_t p = 0; p < k_pool_count; ++p) {
        pools[p] += o.pools[p];
    }
    profile += o.profile;
    health += o.health;
    allocation += o.allocation;
    return *this;
}

void move_office_split(GpuTotals& totals, bool to_off_hours) {
    const auto move = [&](Pool office, Pool off) {
        double& from = totals.pools[static_cast<std::size_t>(to_off_hours ? office : off)];
        double& to = totals.pools[static_cast<std::size_t>(to_off_hours ? off : office)];
        to += from;
        from = 0;
    };
    move(Pool::held_office, Pool::held_off_hours);
    move(Pool::idle_office, Pool::idle_off_hours);
    DurationUs& from = to_off_hours ? totals.profile.office_us : totals.profile.off_hours_us;
    DurationUs& to = to_off_hours ? totals.profile.off_hours_us : totals.profile.office_us;
    to += from;
    from = 0;
}

void CoverageTracker::add(TimeUs t0, DurationUs duration_us, TimeUs end) {
    if (!m_first) {
        m_first = t0;
        m_first_duration_us = duration_us;
    } else if (m_last_end && t0 - *m_last_end > allowed_gap(duration_us)) {
        m_gaps.push_back(Gap{*m_last_end, t0});
    }
    m_last_end = std::max(m_last_end.value_or(end), end);
}

void CoverageTracker::append_gaps(const std::vector<Gap>& gaps) {
    m_gaps.insert(m_gaps.end(), gaps.begin(), gaps.end());
}

std::optional<CoverageSummary> CoverageTracker::summary() const {
    if (!m_first || !m_last_end) {
        return std::nullopt;
    }
    return CoverageSummary{*m_first, m_first_duration_us, *m_last_end, m_gaps};
}

WindowAccumulator::WindowAccumulator(Thresholds thresholds, std::uint32_t nobody,
                                     WeekdayHourFn weekday_hour)
    : m_thresholds(thresholds), m_nobody(nobody), m_weekday_hour(std::move(weekday_hour)) {}

std::pair<int, int> WindowAccumulator::cell_of(TimeUs t) {
    // Zone offsets are whole quarter hours, so the cell is constant within a UTC quarter hour.
    const std::int64_t quarter = floor_div(t, k_quarter_us);
    if (quarter != m_cached_quarter) {
        m_cached_quarter = quarter;
        m_cached_cell = m_weekday_hour(quarter * k_quarter_us);
    }
    return m_cached_cell;
}

void WindowAccumulator::add_as_recorded(const CardTick& tick) {
    if (m_gpus.size() <= tick.gpu) {
        m_gpus.resize(tick.gpu + 1);
    }
    add_counted(tick);
}

void WindowAccumulator::add(const CardTick& tick) {
    if (m_gpus.size() <= tick.gpu) {
        m_gpus.resize(tick.gpu + 1);
    }
    if (m_card_end.size() <= tick.gpu) {
        m_card_end.resize(tick.gpu + 1);
    }
    std::optional<TimeUs>& card_end = m_card_end[tick.gpu];
    const TimeUs end = tick.t0 + std::max<DurationUs>(tick.duration_us, 0);
    const TimeUs covered = card_end.value_or(tick.t0);
    card_end = std::max(card_end.value_or(end), end);
    if (covered <= tick.t0 || tick.duration_us <= 0) {
        add_counted(tick);
        return;
    }
    // An earlier tick of this card already covers [t0, covered): count only the rest.
    const DurationUs overlap = std::min(covered, end) - tick.t0;
    if (overlap > overlap_jitter_us(tick.duration_us)) {
        m_gpus[tick.gpu].overlap_us += overlap; // a real overlap, not clock jitter
    }
    if (overlap >= tick.duration_us) {
        return;
    }
    m_trimmed = tick;
    rescale(m_trimmed, tick.duration_us - overlap);
    m_trimmed.t0 = covered;
    add_counted(m_trimmed);
}

void WindowAccumulator::add_counted(const CardTick& tick) {
    StateTimes states = classify(tick, m_thresholds);
    if (!m_fault_spans.empty()) {
        const TimeUs end = tick.t0 + std::max<DurationUs>(tick.duration_us, 0);
        take_lost_to_faults(states, m_fault_spans.overlap(tick.gpu, tick.t0, end),
                            tick.duration_us);
    }
    m_states += states;
    ++m_ticks;
    if (m_span_sink) {
        m_span_sink(tick.gpu, tick.t0, tick.t0 + std::max<DurationUs>(tick.duration_us, 0), states);
    }

    GpuTotals& gpu = m_gpus[tick.gpu];
    gpu.states += states;
    ++gpu.ticks;
    add_provenance(tick, states, gpu.provenance);
    for (std::size_t b = 0; b < k_bucket_count; ++b) {
        gpu.bucket_us[b] += tick.bucket_us[b];
        m_bucket_us[b] += tick.bucket_us[b];
    }

    add_health(tick, states, gpu.health);
    const TickAllocation allocation = tick_allocation(tick, states);
    gpu.allocation += allocation.matrix;
    add_allocation_shares(tick, allocation.matrix, m_allocations);
    const TickWeights weights{allocation, tick_energy(tick), load_share(tick), states.total(),
                              tick.gpu};
    attribute_us(tick, states, m_thresholds, m_nobody, m_shares);
    const auto totals_of = [this](std::uint32_t identity) -> IdentityTotals& {
        if (m_identities.size() <= identity) {
            m_identities.resize(identity + 1);
        }
        return m_identities[identity];
    };
    for (const IdentityShareUs& s : m_shares) {
        add_share(totals_of(s.identity), s, weights);
    }
    // Presence counts every identity with a process on the card, measured or not (MIG).
    presence(tick, m_thresholds, m_present);
    for (const Presence& p : m_present) {
        IdentityTotals& id = totals_of(p.identity);
        ++id.ticks;
        id.holder_ticks += p.holder ? 1 : 0;
    }
    if (tick.processes.empty() && !m_shares.empty()) {
        ++totals_of(m_nobody).ticks;
    }

    const auto [weekday, hour] = cell_of(tick.t0);
    m_heatmap[static_cast<std::size_t>(weekday)][static_cast<std::size_t>(hour)] += states;
    add_to_pools(tick, states, pattern_of(tick), held_mib(tick, m_thresholds),
                 is_off_hours(weekday, hour), gpu.pools, gpu.profile);
    m_coverage.add(tick.t0, tick.duration_us, tick.t0 + tick.duration_us);
}

bool WindowAccumulator::can_add_rollup(const RollupTotals& rollup) const {
    std::optional<TimeUs> last_end = m_coverage.last_end();
    for (const HourSlice& h : rollup.hours) {
        if (m_fault_spans.any_in(h.hour_start, h.hour_start + k_us_per_hour)) {
            return false; // its idle-held time must be split card-tick by card-tick
        }
        const std::pair<int, int> cell = m_weekday_hour(h.hour_start);
        for (int q = 1; q < 4; ++q) {
            if (m_weekday_hour(h.hour_start + q * k_quarter_us) != cell) {
                return false;
            }
        }
        // A single hour's office split can be moved; a day's was fixed when it was summed.
        if (rollup.hours.size() > 1 && h.off_hours != is_off_hours(cell.first, cell.second)) {
            return false;
        }
        const CoverageSummary& c = h.coverage;
        if (last_end && *last_end > c.first_t0) {
            return false;
        }
        last_end = std::max(last_end.value_or(c.last_end), c.last_end);
    }
    return true;
}

void WindowAccumulator::add_rollup(const RollupTotals& rollup) {
    std::optional<bool> move_to_off_hours;
    if (rollup.hours.size() == 1) {
        const auto [weekday, hour] = cell_of(rollup.hours.front().hour_start);
        if (const bool off = is_off_hours(weekday, hour); off != rollup.hours.front().off_hours) {
            move_to_off_hours = off;
        }
    }
    for (const RollupCard& card : rollup.cards) {
        GpuTotals t = card.totals;
        if (move_to_off_hours) {
            move_office_split(t, *move_to_off_hours);
        }
        m_states += t.states;
        m_ticks += t.ticks;
        for (std::size_t b = 0; b < k_bucket_count; ++b) {
            m_bucket_us[b] += t.bucket_us[b];
        }
        if (m_gpus.size() <= card.gpu) {
            m_gpus.resize(card.gpu + 1);
        }
        if (m_card_end.size() <= card.gpu) {
            m_card_end.resize(card.gpu + 1);
        }
        m_gpus[card.gpu] += t;
        if (m_span_sink && !rollup.hours.empty()) {
            m_span_sink(card.gpu, rollup.hours.front().hour_start,
                        rollup.hours.back().hour_start + k_us_per_hour, t.states);
        }
        // So that a later tick overlapping the rollup is still counted once: the card's own end,
        // else its hours' latest end (all cards of a run share its ticks).
        std::optional<TimeUs>& end = m_card_end[card.gpu];
        for (const HourSlice& h : rollup.hours) {
            const TimeUs card_end = card.last_end.value_or(h.coverage.last_end);
            end = std::max(end.value_or(card_end), card_end);
        }
    }
    for (const RollupIdentity& i : rollup.identities) {
        const std::uint32_t index = i.identity == 0 ? m_nobody : i.identity;
        if (m_identities.size() <= index) {
            m_identities.resize(index + 1);
        }
        m_identities[index] += i.totals;
    }
    for (std::size_t a = 0; a < rollup.allocations.size(); ++a) {
        if (m_allocations.size() <= a) {
            m_allocations.resize(a + 1);
        }
        m_allocations[a] += rollup.allocations[a];
    }
    for (const HourSlice& h : rollup.hours) {
        const auto [weekday, hour] = cell_of(h.hour_start);
        m_heatmap[static_cast<std::size_t>(weekday)][static_cast<std::size_t>(hour)] += h.states;
        const CoverageSummary& c = h.coverage;
        m_coverage.add(c.first_t0, c.first_duration_us, c.last_end);
        m_coverage.append_gaps(c.gaps);
    }
}

DurationUs WindowAccumulator::recorded_us(TimeUs from, TimeUs to) const {
    const auto first = m_coverage.first();
    const auto last_end = m_coverage.last_end();
    if (!first || !last_end || to <= from) {
        return 0;
    }
    const TimeUs begin = std::max(*first, from);
    const TimeUs end = std::min(*last_end, to);
    DurationUs gaps = 0;
    for (const Gap& g : m_coverage.gaps()) {
        gaps += std::max<DurationUs>(std::min(g.to, end) - std::max(g.from, begin), 0);
    }
    return std::max<DurationUs>(end - begin - gaps, 0);
}

void WindowAccumulator::take_allocations(const WindowAccumulator& raw) {
    for (std::size_t g = 0; g < m_gpus.size(); ++g) {
        m_gpus[g].allocation =
            g < raw.m_gpus.size() ? raw.m_gpus[g].allocation : AllocationMatrix{};
    }
    for (std::size_t i = 0; i < m_identities.size(); ++i) {
        const bool seen = i < raw.m_identities.size();
        m_identities[i].unallocated_active_us =
            seen ? raw.m_identities[i].unallocated_active_us : 0;
        m_identities[i].unallocated_idle_held_us =
            seen ? raw.m_identities[i].unallocated_idle_held_us : 0;
    }
    m_allocations = raw.m_allocations;
}

} // namespace gua::audit
