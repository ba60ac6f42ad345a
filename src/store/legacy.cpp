// SPDX-License-Identifier: Apache-2.0
// Row-per-tick (schema 1–2) files: their card-ticks become tick blocks run by run.
#include "store/legacy.hpp"

#include "store/rollup.hpp"
#include "store/writer.hpp"

#include <limits>
#include <vector>

namespace gua::store {

namespace {

constexpr int k_legacy_ticks_per_transaction = 2000;

/// Reads up to `limit` ticks (distinct t0) of `run_id` with t0 > after, in time order.
std::vector<telemetry::Tick> read_ticks(Database& db, std::int64_t run_id, TimeUs after,
                                        int limit) {
    Statement cards = db.prepare(
        "SELECT c.t0_us, c.duration_us, c.util_source, c.util_pct, c.active_us, c.idle_us, "
        "c.underutilized_us, c.productive_us, c.compute_bound_us, c.mem_util_pct, "
        "c.mem_used_mib, c.power_mw, c.temperature_c, c.sm_clock_mhz, c.clock_events, "
        "c.read_errors, g.uuid, g.idx, g.name, g.memory_total_mib, g.pci_bus_id, g.parent_uuid, "
        "c.gpu_id FROM legacy_card_tick c JOIN gpu g ON g.id = c.gpu_id WHERE c.run_id = ?1 AND "
        "c.t0_us > ?2 AND c.t0_us IN (SELECT DISTINCT t0_us FROM legacy_card_tick WHERE run_id = "
        "?1 AND t0_us > ?2 ORDER BY t0_us LIMIT ?3) ORDER BY c.t0_us, g.idx, g.uuid");
    cards.bind(1, run_id);
    cards.bind(2, std::int64_t{after});
    cards.bind(3, std::int64_t{limit});
    Statement procs = db.prepare(
        "SELECT pr.pid, pr.start_ticks, pr.command, p.type, p.mem_used_mib, p.sm_util_pct, "
        "i.user, i.uid, i.container_id, i.pod_uid, i.slurm_job, i.systemd_unit, i.jupyter_kernel "
        "FROM legacy_proc_tick p JOIN process pr ON pr.id = p.process_id JOIN identity i ON "
        "i.id = pr.identity_id WHERE p.t0_us = ? AND p.gpu_id = ? ORDER BY pr.pid, p.type");
    std::vector<telemetry::Tick> ticks;
    while (cards.step()) {
        const TimeUs t0 = cards.int64(0);
        if (ticks.empty() || ticks.back().t0 != t0) {
            ticks.push_back(telemetry::Tick{});
            ticks.back().seq = ticks.size() - 1;
            ticks.back().t0 = t0;
            ticks.back().duration_us = cards.int64(1);
        }
        telemetry::CardTickRecord r;
        r.util_source = static_cast<telemetry::UtilSource>(cards.int64(2));
        r.util_pct = cards.opt_real(3);
        r.active_us = cards.opt_int64(4);
        for (int b = 0; b < 4; ++b) {
            r.bucket_us[static_cast<std::size_t>(b)] = cards.int64(5 + b);
        }
        r.readings.mem_util_pct = cards.opt_int64(9);
        r.readings.mem_used_mib = cards.opt_int64(10);
        r.readings.power_mw = cards.opt_int64(11);
        r.readings.temperature_c = cards.opt_int64(12);
        r.readings.sm_clock_mhz = cards.opt_int64(13);
        r.readings.clock_events = cards.opt_int64(14);
        r.read_errors = static_cast<int>(cards.int64(15));
        r.device.uuid = cards.text(16);
        r.device.index = static_cast<int>(cards.int64(17));
        r.device.name = cards.text(18);
        r.device.memory_total_mib = cards.opt_int64(19);
        r.device.pci_bus_id = cards.text(20);
        r.device.parent_uuid = cards.text(21);
        procs.bind(1, std::int64_t{t0});
        procs.bind(2, cards.int64(22));
        while (procs.step()) {
            telemetry::ProcessTick p;
            p.pid = static_cast<std::uint32_t>(procs.int64(0));
            p.start_ticks = narrow_int<std::uint64_t>(procs.opt_int64(1));
            p.identity.command = procs.text(2);
            p.type = static_cast<telemetry::ProcessType>(procs.int64(3));
            p.mem_used_mib = procs.opt_int64(4);
            p.sm_util_pct = procs.opt_real(5);
            p.identity.user = procs.text(6);
            p.identity.uid = narrow_int<std::uint32_t>(procs.opt_int64(7));
            p.identity.container_id = procs.text(8);
            p.identity.pod_uid = procs.text(9);
            p.identity.slurm_job = procs.text(10);
            p.identity.systemd_unit = procs.text(11);
            p.identity.jupyter_kernel = procs.text(12);
            r.processes.push_back(std::move(p));
        }
        procs.reset();
        ticks.back().cards.push_back(std::move(r));
    }
    return ticks;
}

audit::Thresholds thresholds_of_run(Database& db, std::int64_t run_id) {
    Statement st = db.prepare(
        "SELECT active_threshold_pct, held_mib, graphics_is_holder FROM run WHERE id = ?");
    st.bind(1, run_id);
    audit::Thresholds t;
    if (st.step()) {
        t.active_util_pct = st.real(0);
        t.held_mib = st.int64(1);
        t.graphics_is_holder = st.int64(2) != 0;
    }
    return t;
}

} // namespace

bool has_legacy_ticks(Database& db) {
    return db.scalar("SELECT count(*) FROM sqlite_schema WHERE name = 'legacy_card_tick'") > 0;
}

std::uint64_t
convert_legacy_ticks(Database& db, const audit::Thresholds& thresholds,
                     const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
    if (!has_legacy_ticks(db)) {
        return 0;
    }
    const auto report = [&](std::uint64_t done, std::uint64_t total) {
        if (progress) {
            progress(done, total);
        }
    };
    // Each run's chunks are read by (run_id, t0_us); the index goes with the table.
    db.exec("CREATE INDEX IF NOT EXISTS legacy_card_tick_run ON legacy_card_tick (run_id, t0_us)");
    const auto total =
        static_cast<std::uint64_t>(db.scalar("SELECT count(*) FROM legacy_card_tick"));
    std::uint64_t done = 0;
    std::vector<std::int64_t> runs;
    {
        Statement st = db.prepare("SELECT DISTINCT run_id FROM legacy_card_tick ORDER BY run_id");
        while (st.step()) {
            runs.push_back(st.int64(0));
        }
    }
    for (const std::int64_t run_id : runs) {
        Writer writer(db, run_id, thresholds_of_run(db, run_id));
        writer.defer_rollups();
        TimeUs after = std::numeric_limits<TimeUs>::min();
        for (;;) {
            Transaction tx(db);
            const std::vector<telemetry::Tick> ticks =
                read_ticks(db, run_id, after, k_legacy_ticks_per_transaction);
            if (ticks.empty()) {
                writer.close_open_block();
                tx.commit();
                break;
            }
            for (const telemetry::Tick& t : ticks) {
                writer.append(t);
                done += t.cards.size();
            }
            // Converted rows go in the same transaction: an interruption resumes after them.
            Statement del_procs = db.prepare(
                "DELETE FROM legacy_proc_tick WHERE t0_us > ?2 AND t0_us <= ?3 AND gpu_id IN "
                "(SELECT gpu_id FROM legacy_card_tick WHERE run_id = ?1 AND t0_us = "
                "legacy_proc_tick.t0_us)");
            Statement del_cards = db.prepare(
                "DELETE FROM legacy_card_tick WHERE run_id = ?1 AND t0_us > ?2 AND t0_us <= ?3");
            for (Statement* st : {&del_procs, &del_cards}) {
                st->bind(1, run_id);
                st->bind(2, std::int64_t{after});
                st->bind(3, std::int64_t{ticks.back().t0});
                st->run();
            }
            after = ticks.back().t0;
            tx.commit();
            report(done, total);
        }
    }
    report(done, total);
    build_missing_rollups(db, std::numeric_limits<TimeUs>::max() / 2, thresholds);
    report(done, total);
    Transaction tx(db);
    // Blocks left open by an interrupted conversion (its run has no rows left to convert) are
    // closed like any orphan; the caller holds the lock, so no live writer owns one.
    std::vector<std::int64_t> open_blocks;
    {
        Statement st = db.prepare("SELECT id FROM tick_block WHERE id < 0 ORDER BY id DESC");
        while (st.step()) {
            open_blocks.push_back(st.int64(0));
        }
    }
    Statement close = db.prepare("UPDATE tick_block SET id = (SELECT coalesce(max(id), 0) + 1 "
                                 "FROM tick_block WHERE id > 0) WHERE id = ?");
    for (const std::int64_t id : open_blocks) {
        close.bind(1, id);
        close.run();
    }
    db.exec("DROP TABLE legacy_proc_tick; DROP TABLE legacy_card_tick;");
    tx.commit();
    return done;
}

} // namespace gua::store
