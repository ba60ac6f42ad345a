// SPDX-License-Identifier: Apache-2.0
// Read path: dimensions, raw card-ticks decoded from tick blocks, and windows that combine
// hourly rollups with raw card-ticks.
#include "store/reader.hpp"

#include "store/allocations.hpp"
#include "store/raw.hpp"
#include "store/rollup.hpp"

#include <algorithm>

namespace gua::store {

namespace {

/// Rolled-up hours read per read transaction.
constexpr std::int64_t k_chunk_hours = 7 * 24;

} // namespace

std::vector<RunRow> Reader::runs() {
    std::vector<RunRow> out;
    Statement st = m_db.prepare("SELECT id, host, driver_version, source, gua_version, "
                                "interval_us, active_threshold_pct, started_us, ended_us "
                                "FROM run ORDER BY id");
    while (st.step()) {
        out.push_back(RunRow{st.int64(0), st.text(1), st.text(2), st.text(3), st.text(4),
                             st.int64(5), st.real(6), st.int64(7), st.opt_int64(8)});
    }
    return out;
}

std::vector<GpuRow> Reader::gpus() {
    std::vector<GpuRow> out;
    Statement st = m_db.prepare(
        "SELECT id, uuid, idx, name, memory_total_mib, parent_uuid FROM gpu ORDER BY idx, uuid");
    while (st.step()) {
        out.push_back(GpuRow{st.int64(0), st.text(1), static_cast<int>(st.int64(2)), st.text(3),
                             st.opt_int64(4), st.text(5)});
    }
    return out;
}

std::vector<IdentityRow> Reader::identities() {
    std::vector<IdentityRow> out;
    Statement st = m_db.prepare("SELECT i.id, i.user, i.uid, i.container_id, i.pod_uid, "
                                "i.slurm_job, i.systemd_unit, i.jupyter_kernel, i.pod_namespace, "
                                "i.pod_name, i.container_name FROM identity i ORDER BY i.id");
    while (st.step()) {
        IdentityRow row;
        row.id = st.int64(0);
        row.identity.user = st.text(1);
        if (auto uid = st.opt_int64(2)) {
            row.identity.uid = static_cast<std::uint32_t>(*uid);
        }
        row.identity.container_id = st.text(3);
        row.identity.pod_uid = st.text(4);
        row.identity.slurm_job = st.text(5);
        row.identity.systemd_unit = st.text(6);
        row.identity.jupyter_kernel = st.text(7);
        row.identity.pod_namespace = st.text(8);
        row.identity.pod_name = st.text(9);
        row.identity.container_name = st.text(10);
        out.push_back(std::move(row));
    }
    return out;
}

std::optional<std::pair<TimeUs, TimeUs>> Reader::span() {
    // Index lookups, not a scan: a block holds ticks starting in one UTC hour, so (for ticks
    // shorter than a day) the newest end is in a block starting within a day of the newest start.
    Statement st = m_db.prepare(
        "SELECT (SELECT min(t0_us) FROM tick_block), (SELECT max(end_us) FROM tick_block WHERE "
        "t0_us >= (SELECT max(t0_us) FROM tick_block) - 86400000000)");
    if (!st.step() || st.is_null(0)) {
        return std::nullopt;
    }
    return std::pair<TimeUs, TimeUs>{st.int64(0), st.int64(1)};
}

std::uint64_t Reader::card_tick_count() {
    return static_cast<std::uint64_t>(
        m_db.scalar("SELECT coalesce(sum(n_ticks * json_array_length(cards)), 0) FROM tick_block"));
}

std::optional<std::pair<TimeUs, TimeUs>> Reader::rollup_span() {
    Statement st = m_db.prepare("SELECT min(hour), max(hour) FROM rollup_hour");
    if (!st.step() || st.is_null(0)) {
        return std::nullopt;
    }
    return std::pair<TimeUs, TimeUs>{st.int64(0) * k_us_per_hour,
                                     (st.int64(1) + 1) * k_us_per_hour};
}

std::vector<audit::AllocationRow> Reader::allocations(TimeUs from, TimeUs to) {
    from = std::clamp(from, k_time_min, k_time_max);
    to = std::clamp(to, k_time_min, k_time_max);
    ReadTransaction tx(m_db);
    return read_allocations(m_db, from, to).rows;
}

void Reader::scan(TimeUs from, TimeUs to, const std::function<void(const audit::CardTick&)>& fn) {
    from = std::clamp(from, k_time_min, k_time_max);
    to = std::clamp(to, k_time_min, k_time_max);
    const auto raw = span();
    if (!raw || from >= to) {
        return;
    }
    const WindowAllocations window = [&] {
        ReadTransaction tx(m_db);
        return read_allocations(m_db, from, to);
    }();
    AllocationShares shares(window);
    // A block's ticks all start in the hour of its first tick, though not always after it (the
    // clock may step back), so the hour is the safe lower bound.
    from = std::max(from, hour_of(raw->first) * k_us_per_hour);
    to = std::min(to, raw->second + 1);
    BlockScanner scanner(m_db);
    ProcessIdentities identities(m_db);
    audit::CardTick tick;
    while (from < to) {
        const TimeUs end = std::min(to, (hour_of(from) + k_chunk_hours) * k_us_per_hour);
        ReadTransaction tx(m_db);
        scanner.scan(from, end, [&](const DecodedTicks& d) {
            for (const StoredCardTick& t : d.ticks) {
                to_audit(d, t, identities, tick);
                shares.fill(tick);
                fn(tick);
            }
        });
        from = end;
    }
    note(scanner);
}

void Reader::note(const BlockScanner& scanner) {
    for (const BadBlock& b : scanner.bad_blocks()) {
        note_bad_block(m_bad, b);
    }
}

namespace {

/// One pass of Reader::accumulate over [pos, to): raw card-ticks and rollups into `acc`, a day,
/// an hour or a tick at a time.
struct WindowPass {
    BlockScanner& scanner;
    ProcessIdentities& identities;
    RollupReader& rollups;
    AllocationShares& shares;
    std::optional<std::int64_t> gpu;
    audit::WindowAccumulator& acc;
    WindowSources& sources;
    std::int64_t raw_first_hour = 0; ///< the hour of the oldest raw tick
    TimeUs pos = 0;                  ///< what is added: [from, pos)
    std::vector<StoredRollup> hours;
    audit::CardTick tick;

    /// The raw card-ticks of [a, b).
    void add_raw(TimeUs a, TimeUs b) {
        if (a >= b) {
            return;
        }
        scanner.scan(a, b, [&](const DecodedTicks& d) {
            for (const StoredCardTick& t : d.ticks) {
                if (gpu && t.gpu_id != *gpu) {
                    continue;
                }
                to_audit(d, t, identities, tick);
                shares.fill(tick);
                acc.add(tick);
                ++sources.raw_ticks;
            }
        });
    }

    /// Adds [pos, end) hour by hour: hourly rollups where exact (or where the raw ticks are
    /// gone), raw ticks elsewhere.
    void by_hours(TimeUs end) {
        if (pos >= end) {
            return;
        }
        rollups.hours(hour_of(pos), hour_of(end - 1) + 1, hours);
        for (const StoredRollup& h : hours) {
            const TimeUs start = h.first_hour * k_us_per_hour;
            if (start < pos || start + k_us_per_hour > end) {
                continue;
            }
            add_raw(pos, start);
            pos = start;
            if (h.totals.cards.empty()) {
                pos = start + k_us_per_hour;
            } else if (h.thresholds == acc.thresholds() && acc.can_add_rollup(h.totals)) {
                acc.add_rollup(h.totals);
                ++sources.rollup_hours;
                pos = start + k_us_per_hour;
            } else if (h.first_hour < raw_first_hour) {
                acc.add_rollup(h.totals);
                ++sources.approximate_hours;
                pos = start + k_us_per_hour;
            }
        }
        add_raw(pos, end);
        pos = end;
    }

    /// Adds the whole days of `days` inside [pos, to) from their daily rollups where exact, the
    /// time before each hour by hour.
    void by_days(const std::vector<StoredRollup>& days, TimeUs to) {
        for (const StoredRollup& d : days) {
            const TimeUs start = d.first_hour * k_us_per_hour;
            if (start < pos || start + k_us_per_day > to || d.thresholds != acc.thresholds() ||
                d.hours_with_ticks != static_cast<std::int64_t>(d.totals.hours.size())) {
                continue;
            }
            by_hours(start);
            if (acc.can_add_rollup(d.totals)) {
                acc.add_rollup(d.totals);
                sources.rollup_hours += d.totals.hours.size();
                ++sources.rollup_days;
                pos = start + k_us_per_day;
            }
        }
    }
};

} // namespace

WindowSources Reader::accumulate(TimeUs from, TimeUs to, std::optional<std::int64_t> gpu,
                                 audit::WindowAccumulator& acc) {
    WindowSources sources;
    from = std::clamp(from, k_time_min, k_time_max);
    to = std::clamp(to, k_time_min, k_time_max);
    const auto raw = span();
    const auto rolled = rollup_span();
    if (from >= to || (!raw && !rolled)) {
        return sources;
    }
    // The allocations of the same window as allocations(from, to), so that the card-ticks'
    // AllocationShare index the caller's table.
    const WindowAllocations window = [&] {
        ReadTransaction tx(m_db);
        return read_allocations(m_db, from, to);
    }();
    AllocationShares shares(window);
    const TimeUs first =
        std::min(raw ? raw->first : k_time_max, rolled ? rolled->first : k_time_max);
    const TimeUs last =
        std::max(raw ? raw->second : k_time_min, rolled ? rolled->second : k_time_min);
    from = std::max(from, hour_of(first) * k_us_per_hour);
    to = std::min(to, last + 1);
    BlockScanner scanner(m_db);
    ProcessIdentities identities(m_db);
    RollupReader rollups(m_db, gpu);
    const std::int64_t raw_first_hour = raw ? hour_of(raw->first) : std::int64_t{k_time_max};
    WindowPass pass{scanner, identities,     rollups, shares, gpu, acc,
                    sources, raw_first_hour, from,    {},     {}};
    std::vector<StoredRollup> days;
    constexpr std::int64_t k_chunk_days = k_chunk_hours / 24;
    for (std::int64_t chunk = day_of_hour(hour_of(from)); pass.pos < to; chunk += k_chunk_days) {
        const TimeUs chunk_end = std::min(to, (chunk + k_chunk_days) * k_us_per_day);
        ReadTransaction tx(m_db);
        if (gpu) {
            days.clear(); // daily rollups have no per-card coverage: hour by hour
        } else {
            rollups.days(chunk, chunk + k_chunk_days, days);
        }
        pass.by_days(days, to);
        pass.by_hours(chunk_end);
    }
    note(scanner);
    return sources;
}

} // namespace gua::store
