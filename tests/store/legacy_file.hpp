// SPDX-License-Identifier: Apache-2.0
// A database file as gua 0.1 wrote it (schema 2, one row per card-tick), for upgrade tests.
#pragma once

#include "store/database.hpp"
#include "store/schema.hpp"

#include <string>

namespace gua::testing {

/// A schema-2 file as gua 0.1 wrote it: run 1 with two cards over three 30 s ticks, a process
/// of alice on card 0 (idle-held 8000 MiB), a process of an unknown owner on card 1.
inline void write_row_per_tick_file(const std::string& path) {
    store::Database db(path, store::OpenMode::create);
    store::migrate_to(db, 2);
    db.exec(R"sql(
INSERT INTO run (id, host, driver_version, source, gua_version, interval_us, active_threshold_pct,
                 started_us, ended_us)
VALUES (1, 'h', '560.35.05', 'nvml', '0.1.0', 30000000, 10, 1767607200000000, 1767607290000000);
INSERT INTO gpu (id, uuid, idx, name, memory_total_mib, pci_bus_id)
VALUES (1, 'GPU-aaaa', 0, 'NVIDIA A100', 81920, '0000:01:00.0'),
       (2, 'GPU-bbbb', 1, 'NVIDIA A100', 81920, '0000:02:00.0');
INSERT INTO identity (id, user, uid) VALUES (1, 'alice', 1001), (2, 'unknown', NULL);
INSERT INTO process (id, pid, start_ticks, command, identity_id)
VALUES (1, 4242, 777, 'python3', 1), (2, 99, NULL, '', 2);
)sql");
    for (int k = 0; k < 3; ++k) {
        const std::string t0 = std::to_string(1767607200000000LL + k * 30000000LL);
        db.exec("INSERT INTO card_tick (t0_us, gpu_id, run_id, duration_us, util_source, "
                "util_pct, active_us, idle_us, underutilized_us, productive_us, compute_bound_us, "
                "mem_util_pct, mem_used_mib, power_mw, temperature_c, sm_clock_mhz, clock_events, "
                "read_errors) VALUES (" +
                t0 +
                ", 1, 1, 30000000, 2, 0.5, 0, 30000000, 0, 0, 0, "
                "1, 8100, 61000, 40, 210, 1, 0), (" +
                t0 +
                ", 2, 1, 30000000, 2, 93.25, 30000000, "
                "0, 0, 30000000, 0, 70, 20000, 300000, 70, 1980, 0, " +
                std::to_string(k) +
                ");"
                "INSERT INTO proc_tick (t0_us, gpu_id, process_id, type, mem_used_mib, "
                "sm_util_pct) VALUES (" +
                t0 + ", 1, 1, 0, 8000, 0.0), (" + t0 + ", 2, 2, 0, NULL, 93.0);");
    }
}

} // namespace gua::testing
