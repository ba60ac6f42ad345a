// View SQL: block_tick expands a block's ticks with a recursive CTE (t0 and duration from the
// delta streams); card_tick and proc_tick decode each stream at the value's index.
#include "store/views.hpp"

#include "store/block.hpp"
#include "store/codec.hpp"

#include <fmt/format.h>

#include <string_view>

namespace gua::store {

namespace {

std::string value(std::string_view column, std::string_view index, std::string_view period) {
    return codec::value_sql(column, index, period);
}

/// Zigzag-decoded value of a stream.
std::string signed_value(std::string_view column, std::string_view index, std::string_view period) {
    return fmt::format("(SELECT (z >> 1) * (1 - 2 * (z & 1)) - (z & 1) FROM (SELECT {} AS z))",
                       value(column, index, period));
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
        signed_value("b.t0_delta", "tk.k + 1", "1"), signed_value("b.dur_delta", "tk.k + 1", "1"));
}

/// SQL: how many of the first `i` values of the shape stream (width 1) are `code`.
std::string shape_count(std::uint64_t code) {
    const auto count = [&](const std::string& text) {
        return fmt::format("(length({0}) - length(replace({0}, char({1}), '')))", text, code + 2);
    };
    return fmt::format("(CASE WHEN unicode(shape) >= 97 THEN (CASE WHEN unicode(substr(shape, 2, "
                       "1)) = {0} THEN i ELSE 0 END) WHEN unicode(shape) >= 81 THEN (i / n_cards) "
                       "* {1} + {2} ELSE {3} END)",
                       code + 2, count("substr(shape, 2, n_cards)"),
                       count("substr(shape, 2, i % n_cards)"), count("substr(shape, 2, i)"));
}

std::string card_tick_view() {
    const auto ex = [](int k) { return signed_value("shape_us", fmt::format("e + {}", k), "1"); };
    const auto bucket = [&](int b) {
        return fmt::format(
            "CASE WHEN shape IS NULL THEN 0 WHEN shape < 8 THEN (shape % 4 = {0}) "
            "* duration_us WHEN shape = 8 THEN {1} ELSE {2} END",
            b, b < 3 ? ex(b) : fmt::format("duration_us - {} - {} - {}", ex(0), ex(1), ex(2)),
            ex(b + 1));
    };
    const auto card = [](std::string_view column) { return value(column, "i", "n_cards"); };
    const std::string held_mib = fmt::format(
        "(SELECT COALESCE(SUM(CASE WHEN p.value ->> 2 IN (0, 2) THEN COALESCE({0}, 101) END), 0) "
        "FROM json_each(procs) p WHERE p.value ->> 0 = slot)",
        value("proc_mem_mib", "k * json_array_length(procs) + p.key", "json_array_length(procs)"));
    return fmt::format(
        R"sql(CREATE VIEW card_tick AS
SELECT t0_us, gpu_id, run_id, duration_us, util_source, util_pct,
       CASE WHEN shape IS NULL THEN NULL WHEN shape < 8 THEN (shape >= 4) * duration_us
            WHEN shape = 8 THEN duration_us - {0} ELSE {1} END AS active_us,
       {2} AS idle_us, {3} AS underutilized_us, {4} AS productive_us, {5} AS compute_bound_us,
       mem_util_pct, mem_used_mib, power_w * 1000 AS power_mw, temperature_c, sm_clock_mhz,
       clock_events, read_errors, held_mib
FROM (SELECT t0_us, gpu_id, run_id, duration_us, shape_us,
             {6} AS util_source, {7} / 100.0 AS util_pct, {8} AS shape,
             3 * {17} + 5 * {18} AS e,
             {9} AS mem_util_pct, {10} AS mem_used_mib, {11} AS power_w, {12} AS temperature_c,
             {13} AS sm_clock_mhz, {14} AS clock_events, {15} AS read_errors, {16} AS held_mib
      FROM (SELECT tk.t0_us, tk.duration_us, tk.k, c.key AS slot, c.value AS gpu_id, b.run_id,
                   b.procs, b.util_source, b.util_cpct, b.shape, b.shape_us, b.mem_util_pct,
                   b.mem_used_mib, b.power_w, b.temperature_c, b.sm_clock_mhz, b.clock_events,
                   b.read_errors, b.proc_mem_mib, json_array_length(b.cards) AS n_cards,
                   tk.k * json_array_length(b.cards) + c.key AS i
            FROM block_tick tk JOIN tick_block b ON b.id = tk.block_id
            JOIN json_each(b.cards) c));
)sql",
        ex(0), ex(0), bucket(0), bucket(1), bucket(2), bucket(3), card("util_source"),
        card("util_cpct"), card("shape"), card("mem_util_pct"), card("mem_used_mib"),
        card("power_w"), card("temperature_c"), card("sm_clock_mhz"), card("clock_events"),
        card("read_errors"), held_mib, shape_count(k_shape_partial), shape_count(k_shape_explicit));
}

std::string proc_tick_view() {
    return fmt::format(
        R"sql(CREATE VIEW proc_tick AS
SELECT tk.t0_us, b.cards ->> (p.value ->> 0) AS gpu_id, p.value ->> 1 AS process_id,
       p.value ->> 2 AS type, {0} AS mem_used_mib, {1} / 100.0 AS sm_util_pct
FROM block_tick tk JOIN tick_block b ON b.id = tk.block_id JOIN json_each(b.procs) p;
)sql",
        value("b.proc_mem_mib", "tk.k * json_array_length(b.procs) + p.key",
              "json_array_length(b.procs)"),
        value("b.proc_sm_cpct", "tk.k * json_array_length(b.procs) + p.key",
              "json_array_length(b.procs)"));
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
            WHEN c.held_mib > 100 THEN (c.duration_us - c.active_us) / 1e6 ELSE 0 END
           AS idle_held_s,
       CASE WHEN c.active_us IS NULL THEN NULL
            WHEN c.held_mib > 100 THEN 0 ELSE (c.duration_us - c.active_us) / 1e6 END
           AS truly_idle_s,
       CASE WHEN c.active_us IS NULL THEN 'n/a'
            WHEN c.active_us * 2 >= c.duration_us THEN 'active'
            WHEN c.held_mib > 100 THEN 'idle-held' ELSE 'truly-idle' END AS state,
       c.mem_used_mib, c.power_mw / 1000.0 AS power_w, c.temperature_c, c.sm_clock_mhz
FROM card_tick c
JOIN gpu g ON g.id = c.gpu_id;

CREATE VIEW process_tick AS
SELECT strftime('%Y-%m-%dT%H:%M:%SZ', p.t0_us / 1000000, 'unixepoch') AS start_utc,
       g.idx AS gpu, g.uuid AS uuid, pr.pid, i.user, pr.command,
       CASE p.type WHEN 0 THEN 'compute' WHEN 1 THEN 'graphics' ELSE 'mps' END AS type,
       p.mem_used_mib, p.sm_util_pct,
       i.container_id, i.pod_uid, i.slurm_job, i.systemd_unit, i.jupyter_kernel
FROM proc_tick p
JOIN gpu g ON g.id = p.gpu_id
JOIN process pr ON pr.id = p.process_id
JOIN identity i ON i.id = pr.identity_id;
)sql";

} // namespace

std::string views_v1_sql() {
    return block_tick_view() + card_tick_view() + proc_tick_view() + std::string(k_state_views);
}

} // namespace gua::store
