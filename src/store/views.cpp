// SPDX-License-Identifier: Apache-2.0
// View SQL of the current schema: block_tick expands a block's ticks with a recursive CTE (t0 and
// duration from the delta streams); block_card decodes each card-tick's streams; card_tick and
// proc_tick show them. Migrations keep their own frozen copy (src/store/migrations/).
#include "store/views.hpp"

#include "store/block.hpp"
#include "store/codec.hpp"
#include "telemetry/card_fields.hpp"

#include <fmt/format.h>

#include <string_view>

namespace gua::store {

namespace {

std::string value(std::string_view column, std::string_view index, std::string_view period,
                  std::string_view ticks) {
    return codec::value_sql(column, index, period, ticks);
}

std::string unzigzag(std::string_view z) {
    return fmt::format("(({0}) >> 1) * (1 - 2 * (({0}) & 1)) - (({0}) & 1)", z);
}

/// Zigzag-decoded value of a stream.
std::string signed_value(std::string_view column, std::string_view index, std::string_view period,
                         std::string_view ticks) {
    return fmt::format("(SELECT {} FROM (SELECT {} AS z))", unzigzag("z"),
                       value(column, index, period, ticks));
}

std::string block_tick_view() {
    return fmt::format(
        R"sql(CREATE VIEW block_tick AS
WITH RECURSIVE tk(block_id, k, t0_us, duration_us) AS (
    SELECT id, 0, t0_us, tick_us FROM tick_block
    UNION ALL
    SELECT tk.block_id, tk.k + 1, tk.t0_us + tk.duration_us + {0}, b.tick_us + {1}
    FROM tk JOIN tick_block b ON b.id = tk.block_id WHERE tk.k + 1 < b.n_ticks)
SELECT block_id, k, t0_us, duration_us FROM tk;
)sql",
        signed_value("b.t0_delta", "tk.k + 1", "1", "b.n_ticks"),
        signed_value("b.dur_delta", "tk.k + 1", "1", "b.n_ticks"));
}

/// SQL: how many of the first `i` values of the code stream in `column` (width 1: shape or
/// alloc_shape) are `code`, for each of the stream's forms (codec.hpp): constant, periodic,
/// varying, and slotted, where each card slot `t` is steady (one value) or keeps all its n_ticks
/// values, of which the first i / n_cards, plus one for a slot before i's, come before value i.
std::string code_count(std::string_view column, std::uint64_t code) {
    const auto count = [&](const std::string& text) {
        return fmt::format("(length({0}) - length(replace({0}, char({1}), '')))", text, code + 2);
    };
    const std::string before = "(i / n_cards + (q.key < i % n_cards))";
    const std::string start =
        fmt::format("2 + n_cards + q.key + (n_ticks - 1) * (length(substr({0}, 2, "
                    "q.key)) - length(replace(substr({0}, 2, q.key), char(3), '')))",
                    column);
    const std::string slotted =
        fmt::format("(SELECT CAST(total(CASE WHEN unicode(substr({4}, 2 + q.key, 1)) = 2 THEN "
                    "(unicode(substr({4}, {0}, 1)) = {1}) * {2} ELSE {3} END) AS INTEGER) FROM "
                    "json_each(cards) q)",
                    start, code + 2, before,
                    count(fmt::format("substr({}, {}, {})", column, start, before)), column);
    return fmt::format("(CASE WHEN unicode({5}) >= 113 THEN {4} WHEN unicode({5}) >= 97 THEN "
                       "(CASE WHEN unicode(substr({5}, 2, 1)) = {0} THEN i ELSE 0 END) WHEN "
                       "unicode({5}) >= 81 THEN (i / n_cards) * {1} + {2} ELSE {3} END)",
                       code + 2, count(fmt::format("substr({}, 2, n_cards)", column)),
                       count(fmt::format("substr({}, 2, i % n_cards)", column)),
                       count(fmt::format("substr({}, 2, i)", column)), slotted, column);
}

std::string shape_count(std::uint64_t code) {
    return code_count("shape", code);
}

/// SQL of what a per-card field with a base is stored relative to (block.hpp stored_base()), in
/// terms of block_card's columns.
std::string base_sql(const telemetry::CardFieldInfo& f) {
    const std::string_view power = telemetry::info(k_power_field).column;
    const std::string_view events = telemetry::info(k_events_field).column;
    const std::string bad_duration =
        "duration_us <= 0 OR duration_us > 1099511627776"; // stored_base()'s bounds
    switch (f.base) {
    case telemetry::StoredBase::none:
        break;
    case telemetry::StoredBase::energy:
        return fmt::format("CASE WHEN {0} OR {1} IS NULL OR {1} > 1048576 THEN 0 ELSE ({1} * "
                           "duration_us + 500000) / 1000000 END",
                           bad_duration, power);
    case telemetry::StoredBase::clock_event:
        return fmt::format("CASE WHEN {0} OR {1} IS NULL OR ({1} & {2}) = 0 THEN 0 ELSE "
                           "duration_us END",
                           bad_duration, events, f.base_bit);
    }
    return "0";
}

/// The card_tick column of a per-card field: its stored value in block_card, in the field's unit.
std::string field_column(const telemetry::CardFieldInfo& f) {
    std::string value(f.column);
    if (f.base != telemetry::StoredBase::none) {
        value = fmt::format("CASE WHEN {0} IS NULL THEN NULL ELSE {1} + {2} END", f.column,
                            unzigzag(f.column), base_sql(f));
    }
    if (f.quantum != 1) {
        value = fmt::format("({}) * {}", value, f.quantum);
    }
    return value == f.id ? value : fmt::format("{} AS {}", value, f.id);
}

/// One row per card-tick of a block with its streams decoded; `m` is the measured time.
std::string block_card_view() {
    // x0–x4: the card-tick's values in shape_us (as many as its shape has; the others unused).
    const auto ex = [](int k) { return fmt::format("x{}", k); };
    std::string extras;
    for (int k = 0; k < 5; ++k) {
        extras += fmt::format(
            ", {} AS x{}", signed_value("shape_us", fmt::format("e + {}", k), "1", "n_ticks"), k);
    }
    // a0–a5: the six allocation times of a card-tick whose alloc_shape is explicit.
    for (int k = 0; k < 6; ++k) {
        extras += fmt::format(", {} AS a{}",
                              value("alloc_us", fmt::format("6 * ae + {}", k), "1", "n_ticks"), k);
    }
    const auto bucket = [&](int b) {
        return fmt::format("CASE WHEN shape IS NULL THEN 0 WHEN shape < 8 THEN (shape % 4 = {0}) "
                           "* m WHEN shape = 8 THEN {1} ELSE {2} END",
                           b, b < 3 ? ex(b) : fmt::format("m - {} - {} - {}", ex(0), ex(1), ex(2)),
                           ex(b + 1));
    };
    const auto card = [](std::string_view column) {
        return value(column, "i", "n_cards", "n_ticks");
    };
    const std::string held_mib = fmt::format(
        "(SELECT COALESCE(SUM(CASE WHEN p.value ->> 2 IN (0, 2) THEN COALESCE({0}, 101) END), 0) "
        "FROM json_each(procs) p WHERE p.value ->> 0 = slot)",
        value("proc_mem_mib", "k * n_procs + p.key", "n_procs", "n_ticks"));
    std::string decoded;
    std::string columns;
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        decoded += fmt::format("                         {} AS {},\n", card(f.column), f.column);
        columns += fmt::format("                               b.{},\n", f.column);
    }
    return fmt::format(
        R"sql(CREATE VIEW block_card AS
SELECT *, CASE WHEN idle_unlisted_z IS NULL THEN 0 ELSE {0} + CASE WHEN has_procs OR
       active_us IS NULL THEN 0 ELSE max(m - active_us - idle_unknown_us, 0) END END
       AS idle_unlisted_us
FROM (SELECT *,
             CASE WHEN shape IS NULL THEN NULL WHEN shape < 8 THEN (shape >= 4) * m
                  WHEN shape = 8 THEN m - {1} ELSE {1} END AS active_us,
             {2} AS idle_us, {3} AS underutilized_us, {4} AS productive_us,
             {5} AS compute_bound_us
      FROM (SELECT *, duration_us - unmeasured_us AS m{18}
            FROM (SELECT block_id, k, slot, t0_us, gpu_id, run_id, duration_us, shape_us, procs,
                         n_procs, n_ticks, proc_mem_mib, proc_sm_cpct, proc_active_us, alloc_us,
                         COALESCE({19}, 0) AS alloc_code, {20} AS ae,
                         {6} AS util_source, {7} / 100.0 AS util_pct, {8} AS shape,
                         3 * {9} + 5 * {10} AS e,
                         COALESCE({11}, 0) AS unmeasured_us, COALESCE({12}, 0) AS idle_unknown_us,
                         {13} AS idle_unlisted_z,
                         EXISTS (SELECT 1 FROM json_each(procs) p WHERE p.value ->> 0 = slot)
                             AS has_procs,
{16}                         {14} AS read_errors, {15} AS held_mib
                  FROM (SELECT tk.block_id, tk.k, tk.t0_us, tk.duration_us, c.key AS slot,
                               c.value AS gpu_id, b.run_id, b.procs, b.util_source, b.util_cpct,
                               b.shape, b.shape_us, b.alloc_shape, b.alloc_us,
{17}                               b.read_errors, b.proc_mem_mib, b.proc_sm_cpct, b.proc_active_us,
                               b.unmeasured_us AS unmeasured_s, b.idle_unlisted_us AS unlisted_s,
                               b.idle_unknown_us AS unknown_s, b.n_ticks, b.cards,
                               json_array_length(b.cards) AS n_cards,
                               json_array_length(b.procs) AS n_procs,
                               tk.k * json_array_length(b.cards) + c.key AS i
                        FROM block_tick tk JOIN tick_block b ON b.id = tk.block_id
                        JOIN json_each(b.cards) c))));
)sql",
        unzigzag("idle_unlisted_z"), ex(0), bucket(0), bucket(1), bucket(2), bucket(3),
        card("util_source"), card("util_cpct"), card("shape"), shape_count(k_shape_partial),
        shape_count(k_shape_explicit), card("unmeasured_s"), card("unknown_s"), card("unlisted_s"),
        card("read_errors"), held_mib, decoded, columns, extras, card("alloc_shape"),
        code_count("alloc_shape", k_alloc_explicit));
}

std::string card_tick_view() {
    std::string fields;
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        fields += fmt::format("       {},\n", field_column(f));
    }
    // The allocation crossing (block.hpp allocation_whole() for codes 1 and 2).
    const std::string held = "CASE WHEN active_us IS NULL THEN 0 ELSE max(m - active_us - "
                             "idle_unknown_us - idle_unlisted_us, 0) END";
    const auto crossing = [](std::string_view allocated, std::string_view unknown, int k) {
        return fmt::format("CASE alloc_code WHEN 1 THEN {} WHEN 2 THEN {} WHEN 3 THEN a{} ELSE 0 "
                           "END",
                           allocated, unknown, k);
    };
    return fmt::format(
        R"sql(CREATE VIEW card_tick AS
SELECT t0_us, gpu_id, run_id, duration_us, util_source, util_pct, active_us, idle_us,
       underutilized_us, productive_us, compute_bound_us, unmeasured_us, idle_unlisted_us,
       idle_unknown_us,
{0}       read_errors, held_mib,
       {1} AS allocated_us,
       {2} AS alloc_active_us,
       {3} AS alloc_idle_held_us,
       {4} AS allocated_unused_us,
       {5} AS alloc_unknown_us,
       {6} AS alloc_unknown_idle_us
FROM block_card;
)sql",
        fields, crossing("duration_us", "0", 0), crossing("COALESCE(active_us, 0)", "0", 1),
        crossing(held, "0", 2), crossing("idle_unlisted_us", "0", 3),
        crossing("0", "duration_us", 4), crossing("0", "idle_unlisted_us", 5));
}

std::string proc_tick_view() {
    const std::string pi = "c.k * c.n_procs + p.key";
    return fmt::format(
        R"sql(CREATE VIEW proc_tick AS
SELECT t0_us, gpu_id, process_id, type, mem_used_mib, sm / 100.0 AS sm_util_pct,
       CASE WHEN az IS NULL THEN NULL ELSE {0} + CASE WHEN active_us IS NULL OR sm IS NULL OR
            active_us <= 0 OR active_us > 1099511627776 OR slot_sm = 0 OR slot_sm > 1048576 OR
            sm > slot_sm THEN 0 ELSE active_us * sm / slot_sm END END AS active_us
FROM (SELECT c.t0_us, c.gpu_id, c.active_us, p.value ->> 1 AS process_id, p.value ->> 2 AS type,
             {1} AS mem_used_mib, {2} AS sm, {3} AS az,
             (SELECT CAST(total(min({4}, 1099511627776)) AS INTEGER) FROM json_each(c.procs) q
              WHERE q.value ->> 0 = c.slot) AS slot_sm
      FROM block_card c JOIN json_each(c.procs) p ON p.value ->> 0 = c.slot);
)sql",
        unzigzag("az"), value("c.proc_mem_mib", pi, "c.n_procs", "c.n_ticks"),
        value("c.proc_sm_cpct", pi, "c.n_procs", "c.n_ticks"),
        value("c.proc_active_us", pi, "c.n_procs", "c.n_ticks"),
        value("c.proc_sm_cpct", "c.k * c.n_procs + q.key", "c.n_procs", "c.n_ticks"));
}

constexpr std::string_view k_state_views = R"sql(
CREATE VIEW card_tick_state AS
SELECT strftime('%Y-%m-%dT%H:%M:%SZ', c.t0_us / 1000000, 'unixepoch') AS start_utc,
       g.idx AS gpu, g.uuid AS uuid, g.name AS model,
       c.duration_us / 1e6 AS seconds,
       c.util_pct AS util_pct,
       c.held_mib AS held_mib,
       c.active_us / 1e6 AS active_s,
       CASE WHEN c.active_us IS NULL THEN NULL
            WHEN c.held_mib > 100 THEN c.rest_us / 1e6 ELSE 0 END AS idle_held_s,
       CASE WHEN c.active_us IS NULL THEN NULL
            ELSE (c.not_held_us - c.unknown_idle_us - c.unused_us) / 1e6 END AS truly_idle_s,
       CASE WHEN c.active_us IS NULL THEN NULL ELSE c.unused_us / 1e6 END AS allocated_unused_s,
       CASE WHEN c.active_us IS NULL THEN c.duration_us / 1e6
            ELSE (c.unmeasured_us + c.idle_unknown_us + c.unknown_idle_us) / 1e6 END
           AS unmeasured_s,
       c.allocated_us / 1e6 AS allocated_s,
       c.alloc_unknown_us / 1e6 AS allocation_unknown_s,
       CASE WHEN c.active_us IS NULL THEN 'n/a'
            WHEN c.active_us * 2 >= c.duration_us THEN 'active'
            WHEN (c.unmeasured_us + c.idle_unknown_us + c.unknown_idle_us) * 2 >= c.duration_us
                THEN 'unmeasured'
            WHEN c.held_mib > 100 AND c.rest_us > c.idle_unlisted_us THEN 'idle-held'
            WHEN c.unused_us * 2 > c.not_held_us - c.unknown_idle_us THEN 'allocated-unused'
            ELSE 'truly-idle' END AS state,
       c.mem_used_mib, c.power_mw / 1000.0 AS power_w, c.temperature_c, c.sm_clock_mhz,
       c.power_limit_mw / 1000.0 AS power_limit_w, c.energy_mj / 1000.0 AS energy_j,
       c.max_sm_clock_mhz, c.mem_temperature_c, c.ghost_mib
FROM (SELECT *, min(allocated_unused_us, not_held_us - unknown_idle_us) AS unused_us
      FROM (SELECT *, min(alloc_unknown_idle_us, not_held_us) AS unknown_idle_us
            FROM (SELECT *, CASE WHEN held_mib > 100 THEN idle_unlisted_us
                                 ELSE idle_unlisted_us + rest_us END AS not_held_us
                  FROM (SELECT *, max(duration_us - active_us - unmeasured_us - idle_unknown_us -
                                      idle_unlisted_us, 0) AS rest_us FROM card_tick)))) c
JOIN gpu g ON g.id = c.gpu_id;

CREATE VIEW process_tick AS
SELECT strftime('%Y-%m-%dT%H:%M:%SZ', p.t0_us / 1000000, 'unixepoch') AS start_utc,
       g.idx AS gpu, g.uuid AS uuid, pr.pid, i.user, pr.command,
       CASE p.type WHEN 0 THEN 'compute' WHEN 1 THEN 'graphics' ELSE 'mps' END AS type,
       p.mem_used_mib, p.sm_util_pct, p.active_us / 1e6 AS active_s,
       i.container_id, i.pod_uid, i.slurm_job, i.systemd_unit, i.jupyter_kernel,
       i.pod_namespace, i.pod_name, i.container_name
FROM proc_tick p
JOIN gpu g ON g.id = p.gpu_id
JOIN process pr ON pr.id = p.process_id
JOIN identity i ON i.id = pr.identity_id;
)sql";

} // namespace

std::string views_sql() {
    return block_tick_view() + block_card_view() + card_tick_view() + proc_tick_view() +
           std::string(k_state_views);
}

} // namespace gua::store
