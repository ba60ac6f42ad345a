-- Schema 3 (frozen): tick blocks and rollups replace the row-per-tick tables; the text that
-- created every schema 3 file. Never edit it: a change to the schema is a new migration.
ALTER TABLE run ADD COLUMN held_mib INTEGER NOT NULL DEFAULT 100;
ALTER TABLE run ADD COLUMN graphics_is_holder INTEGER NOT NULL DEFAULT 0;
DROP VIEW card_tick_state;
DROP VIEW process_tick;
ALTER TABLE card_tick RENAME TO legacy_card_tick;
ALTER TABLE proc_tick RENAME TO legacy_proc_tick;
CREATE TABLE rollup_hour (
    hour INTEGER PRIMARY KEY,
    active_util_pct REAL NOT NULL,
    held_mib INTEGER NOT NULL,
    graphics_is_holder INTEGER NOT NULL,
    active_us INTEGER NOT NULL,
    idle_held_us INTEGER NOT NULL,
    truly_idle_us INTEGER NOT NULL,
    unmeasured_us INTEGER NOT NULL,
    first_t0_us INTEGER NOT NULL,
    first_duration_us INTEGER NOT NULL,
    last_end_us INTEGER NOT NULL,
    gaps TEXT
);
CREATE TABLE rollup_day (
    day INTEGER PRIMARY KEY,
    hours INTEGER NOT NULL,
    off_hours_mask INTEGER NOT NULL,
    active_util_pct REAL NOT NULL,
    held_mib INTEGER NOT NULL,
    graphics_is_holder INTEGER NOT NULL
);
CREATE TABLE rollup_day_gpu (
    day INTEGER NOT NULL,
    gpu_id INTEGER NOT NULL,
    ticks INTEGER NOT NULL,
    active_us INTEGER NOT NULL,
    idle_held_us INTEGER NOT NULL,
    truly_idle_us INTEGER NOT NULL,
    unmeasured_us INTEGER NOT NULL,
    idle_us INTEGER NOT NULL,
    underutilized_us INTEGER NOT NULL,
    productive_us INTEGER NOT NULL,
    compute_bound_us INTEGER NOT NULL,
    evidence BLOB,
    PRIMARY KEY (day, gpu_id)
) WITHOUT ROWID;
CREATE TABLE rollup_day_identity (
    day INTEGER NOT NULL,
    gpu_id INTEGER NOT NULL,
    identity_id INTEGER NOT NULL,
    ticks INTEGER NOT NULL,
    holder_ticks INTEGER NOT NULL,
    active_us INTEGER NOT NULL,
    idle_held_us INTEGER NOT NULL,
    idle_held_mib_ms INTEGER NOT NULL,
    PRIMARY KEY (day, gpu_id, identity_id)
) WITHOUT ROWID;
CREATE TABLE rollup_gpu (
    hour INTEGER NOT NULL,
    gpu_id INTEGER NOT NULL,
    ticks INTEGER NOT NULL,
    active_us INTEGER NOT NULL,
    idle_held_us INTEGER NOT NULL,
    truly_idle_us INTEGER NOT NULL,
    unmeasured_us INTEGER NOT NULL,
    idle_us INTEGER NOT NULL,
    underutilized_us INTEGER NOT NULL,
    productive_us INTEGER NOT NULL,
    compute_bound_us INTEGER NOT NULL,
    evidence BLOB,
    first_t0_us INTEGER NOT NULL,
    first_duration_us INTEGER NOT NULL,
    last_end_us INTEGER NOT NULL,
    gaps TEXT,
    PRIMARY KEY (hour, gpu_id)
) WITHOUT ROWID;
CREATE TABLE rollup_identity (
    hour INTEGER NOT NULL,
    gpu_id INTEGER NOT NULL,
    identity_id INTEGER NOT NULL,
    ticks INTEGER NOT NULL,
    holder_ticks INTEGER NOT NULL,
    active_us INTEGER NOT NULL,
    idle_held_us INTEGER NOT NULL,
    idle_held_mib_ms INTEGER NOT NULL,
    PRIMARY KEY (hour, gpu_id, identity_id)
) WITHOUT ROWID;
CREATE TABLE tick_block (
    id INTEGER PRIMARY KEY,
    t0_us INTEGER NOT NULL,
    end_us INTEGER NOT NULL,
    run_id INTEGER NOT NULL REFERENCES run(id),
    n_ticks INTEGER NOT NULL,
    tick_us INTEGER NOT NULL,
    cards TEXT NOT NULL,
    procs TEXT NOT NULL,
    t0_delta TEXT,
    dur_delta TEXT,
    util_source TEXT,
    util_cpct TEXT,
    shape TEXT,
    shape_us TEXT,
    mem_util_pct TEXT,
    mem_used_mib TEXT,
    power_w TEXT,
    temperature_c TEXT,
    sm_clock_mhz TEXT,
    clock_events TEXT,
    read_errors TEXT,
    proc_mem_mib TEXT,
    proc_sm_cpct TEXT
);
CREATE INDEX tick_block_t0 ON tick_block (t0_us);
CREATE VIEW block_tick AS
WITH RECURSIVE tk(block_id, k, t0_us, duration_us) AS (
    SELECT id, 0, t0_us, tick_us FROM tick_block
    UNION ALL
    SELECT tk.block_id, tk.k + 1, tk.t0_us + tk.duration_us + (SELECT (z >> 1) * (1 - 2 * (z & 1)) - (z & 1) FROM (SELECT (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(b.t0_delta, p + 0, 1)) AS c0, unicode(substr(b.t0_delta, p + 1, 1)) AS c1, unicode(substr(b.t0_delta, p + 2, 1)) AS c2, unicode(substr(b.t0_delta, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (tk.k + 1) % (1) ELSE (tk.k + 1) END AS p FROM (SELECT unicode(b.t0_delta) AS h, unicode(b.t0_delta) % 16 AS w))))) AS z)), b.tick_us + (SELECT (z >> 1) * (1 - 2 * (z & 1)) - (z & 1) FROM (SELECT (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(b.dur_delta, p + 0, 1)) AS c0, unicode(substr(b.dur_delta, p + 1, 1)) AS c1, unicode(substr(b.dur_delta, p + 2, 1)) AS c2, unicode(substr(b.dur_delta, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (tk.k + 1) % (1) ELSE (tk.k + 1) END AS p FROM (SELECT unicode(b.dur_delta) AS h, unicode(b.dur_delta) % 16 AS w))))) AS z))
    FROM tk JOIN tick_block b ON b.id = tk.block_id WHERE tk.k + 1 < b.n_ticks)
SELECT block_id, k, t0_us, duration_us FROM tk;
CREATE VIEW card_tick AS
SELECT t0_us, gpu_id, run_id, duration_us, util_source, util_pct,
       CASE WHEN shape IS NULL THEN NULL WHEN shape < 8 THEN (shape >= 4) * duration_us
            WHEN shape = 8 THEN duration_us - (SELECT (z >> 1) * (1 - 2 * (z & 1)) - (z & 1) FROM (SELECT (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(shape_us, p + 0, 1)) AS c0, unicode(substr(shape_us, p + 1, 1)) AS c1, unicode(substr(shape_us, p + 2, 1)) AS c2, unicode(substr(shape_us, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (e + 0) % (1) ELSE (e + 0) END AS p FROM (SELECT unicode(shape_us) AS h, unicode(shape_us) % 16 AS w))))) AS z)) ELSE (SELECT (z >> 1) * (1 - 2 * (z & 1)) - (z & 1) FROM (SELECT (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(shape_us, p + 0, 1)) AS c0, unicode(substr(shape_us, p + 1, 1)) AS c1, unicode(substr(shape_us, p + 2, 1)) AS c2, unicode(substr(shape_us, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (e + 0) % (1) ELSE (e + 0) END AS p FROM (SELECT unicode(shape_us) AS h, unicode(shape_us) % 16 AS w))))) AS z)) END AS active_us,
       CASE WHEN shape IS NULL THEN 0 WHEN shape < 8 THEN (shape % 4 = 0) * duration_us WHEN shape = 8 THEN (SELECT (z >> 1) * (1 - 2 * (z & 1)) - (z & 1) FROM (SELECT (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(shape_us, p + 0, 1)) AS c0, unicode(substr(shape_us, p + 1, 1)) AS c1, unicode(substr(shape_us, p + 2, 1)) AS c2, unicode(substr(shape_us, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (e + 0) % (1) ELSE (e + 0) END AS p FROM (SELECT unicode(shape_us) AS h, unicode(shape_us) % 16 AS w))))) AS z)) ELSE (SELECT (z >> 1) * (1 - 2 * (z & 1)) - (z & 1) FROM (SELECT (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(shape_us, p + 0, 1)) AS c0, unicode(substr(shape_us, p + 1, 1)) AS c1, unicode(substr(shape_us, p + 2, 1)) AS c2, unicode(substr(shape_us, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (e + 1) % (1) ELSE (e + 1) END AS p FROM (SELECT unicode(shape_us) AS h, unicode(shape_us) % 16 AS w))))) AS z)) END AS idle_us, CASE WHEN shape IS NULL THEN 0 WHEN shape < 8 THEN (shape % 4 = 1) * duration_us WHEN shape = 8 THEN (SELECT (z >> 1) * (1 - 2 * (z & 1)) - (z & 1) FROM (SELECT (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(shape_us, p + 0, 1)) AS c0, unicode(substr(shape_us, p + 1, 1)) AS c1, unicode(substr(shape_us, p + 2, 1)) AS c2, unicode(substr(shape_us, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (e + 1) % (1) ELSE (e + 1) END AS p FROM (SELECT unicode(shape_us) AS h, unicode(shape_us) % 16 AS w))))) AS z)) ELSE (SELECT (z >> 1) * (1 - 2 * (z & 1)) - (z & 1) FROM (SELECT (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(shape_us, p + 0, 1)) AS c0, unicode(substr(shape_us, p + 1, 1)) AS c1, unicode(substr(shape_us, p + 2, 1)) AS c2, unicode(substr(shape_us, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (e + 2) % (1) ELSE (e + 2) END AS p FROM (SELECT unicode(shape_us) AS h, unicode(shape_us) % 16 AS w))))) AS z)) END AS underutilized_us, CASE WHEN shape IS NULL THEN 0 WHEN shape < 8 THEN (shape % 4 = 2) * duration_us WHEN shape = 8 THEN (SELECT (z >> 1) * (1 - 2 * (z & 1)) - (z & 1) FROM (SELECT (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(shape_us, p + 0, 1)) AS c0, unicode(substr(shape_us, p + 1, 1)) AS c1, unicode(substr(shape_us, p + 2, 1)) AS c2, unicode(substr(shape_us, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (e + 2) % (1) ELSE (e + 2) END AS p FROM (SELECT unicode(shape_us) AS h, unicode(shape_us) % 16 AS w))))) AS z)) ELSE (SELECT (z >> 1) * (1 - 2 * (z & 1)) - (z & 1) FROM (SELECT (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(shape_us, p + 0, 1)) AS c0, unicode(substr(shape_us, p + 1, 1)) AS c1, unicode(substr(shape_us, p + 2, 1)) AS c2, unicode(substr(shape_us, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (e + 3) % (1) ELSE (e + 3) END AS p FROM (SELECT unicode(shape_us) AS h, unicode(shape_us) % 16 AS w))))) AS z)) END AS productive_us, CASE WHEN shape IS NULL THEN 0 WHEN shape < 8 THEN (shape % 4 = 3) * duration_us WHEN shape = 8 THEN duration_us - (SELECT (z >> 1) * (1 - 2 * (z & 1)) - (z & 1) FROM (SELECT (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(shape_us, p + 0, 1)) AS c0, unicode(substr(shape_us, p + 1, 1)) AS c1, unicode(substr(shape_us, p + 2, 1)) AS c2, unicode(substr(shape_us, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (e + 0) % (1) ELSE (e + 0) END AS p FROM (SELECT unicode(shape_us) AS h, unicode(shape_us) % 16 AS w))))) AS z)) - (SELECT (z >> 1) * (1 - 2 * (z & 1)) - (z & 1) FROM (SELECT (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(shape_us, p + 0, 1)) AS c0, unicode(substr(shape_us, p + 1, 1)) AS c1, unicode(substr(shape_us, p + 2, 1)) AS c2, unicode(substr(shape_us, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (e + 1) % (1) ELSE (e + 1) END AS p FROM (SELECT unicode(shape_us) AS h, unicode(shape_us) % 16 AS w))))) AS z)) - (SELECT (z >> 1) * (1 - 2 * (z & 1)) - (z & 1) FROM (SELECT (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(shape_us, p + 0, 1)) AS c0, unicode(substr(shape_us, p + 1, 1)) AS c1, unicode(substr(shape_us, p + 2, 1)) AS c2, unicode(substr(shape_us, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (e + 2) % (1) ELSE (e + 2) END AS p FROM (SELECT unicode(shape_us) AS h, unicode(shape_us) % 16 AS w))))) AS z)) ELSE (SELECT (z >> 1) * (1 - 2 * (z & 1)) - (z & 1) FROM (SELECT (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(shape_us, p + 0, 1)) AS c0, unicode(substr(shape_us, p + 1, 1)) AS c1, unicode(substr(shape_us, p + 2, 1)) AS c2, unicode(substr(shape_us, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (e + 4) % (1) ELSE (e + 4) END AS p FROM (SELECT unicode(shape_us) AS h, unicode(shape_us) % 16 AS w))))) AS z)) END AS compute_bound_us,
       mem_util_pct, mem_used_mib, power_w * 1000 AS power_mw, temperature_c, sm_clock_mhz,
       clock_events, read_errors, held_mib
FROM (SELECT t0_us, gpu_id, run_id, duration_us, shape_us,
             (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(util_source, p + 0, 1)) AS c0, unicode(substr(util_source, p + 1, 1)) AS c1, unicode(substr(util_source, p + 2, 1)) AS c2, unicode(substr(util_source, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (i) % (n_cards) ELSE (i) END AS p FROM (SELECT unicode(util_source) AS h, unicode(util_source) % 16 AS w))))) AS util_source, (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(util_cpct, p + 0, 1)) AS c0, unicode(substr(util_cpct, p + 1, 1)) AS c1, unicode(substr(util_cpct, p + 2, 1)) AS c2, unicode(substr(util_cpct, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (i) % (n_cards) ELSE (i) END AS p FROM (SELECT unicode(util_cpct) AS h, unicode(util_cpct) % 16 AS w))))) / 100.0 AS util_pct, (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(shape, p + 0, 1)) AS c0, unicode(substr(shape, p + 1, 1)) AS c1, unicode(substr(shape, p + 2, 1)) AS c2, unicode(substr(shape, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (i) % (n_cards) ELSE (i) END AS p FROM (SELECT unicode(shape) AS h, unicode(shape) % 16 AS w))))) AS shape,
             3 * (CASE WHEN unicode(shape) >= 97 THEN (CASE WHEN unicode(substr(shape, 2, 1)) = 10 THEN i ELSE 0 END) WHEN unicode(shape) >= 81 THEN (i / n_cards) * (length(substr(shape, 2, n_cards)) - length(replace(substr(shape, 2, n_cards), char(10), ''))) + (length(substr(shape, 2, i % n_cards)) - length(replace(substr(shape, 2, i % n_cards), char(10), ''))) ELSE (length(substr(shape, 2, i)) - length(replace(substr(shape, 2, i), char(10), ''))) END) + 5 * (CASE WHEN unicode(shape) >= 97 THEN (CASE WHEN unicode(substr(shape, 2, 1)) = 11 THEN i ELSE 0 END) WHEN unicode(shape) >= 81 THEN (i / n_cards) * (length(substr(shape, 2, n_cards)) - length(replace(substr(shape, 2, n_cards), char(11), ''))) + (length(substr(shape, 2, i % n_cards)) - length(replace(substr(shape, 2, i % n_cards), char(11), ''))) ELSE (length(substr(shape, 2, i)) - length(replace(substr(shape, 2, i), char(11), ''))) END) AS e,
             (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(mem_util_pct, p + 0, 1)) AS c0, unicode(substr(mem_util_pct, p + 1, 1)) AS c1, unicode(substr(mem_util_pct, p + 2, 1)) AS c2, unicode(substr(mem_util_pct, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (i) % (n_cards) ELSE (i) END AS p FROM (SELECT unicode(mem_util_pct) AS h, unicode(mem_util_pct) % 16 AS w))))) AS mem_util_pct, (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(mem_used_mib, p + 0, 1)) AS c0, unicode(substr(mem_used_mib, p + 1, 1)) AS c1, unicode(substr(mem_used_mib, p + 2, 1)) AS c2, unicode(substr(mem_used_mib, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (i) % (n_cards) ELSE (i) END AS p FROM (SELECT unicode(mem_used_mib) AS h, unicode(mem_used_mib) % 16 AS w))))) AS mem_used_mib, (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(power_w, p + 0, 1)) AS c0, unicode(substr(power_w, p + 1, 1)) AS c1, unicode(substr(power_w, p + 2, 1)) AS c2, unicode(substr(power_w, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (i) % (n_cards) ELSE (i) END AS p FROM (SELECT unicode(power_w) AS h, unicode(power_w) % 16 AS w))))) AS power_w, (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(temperature_c, p + 0, 1)) AS c0, unicode(substr(temperature_c, p + 1, 1)) AS c1, unicode(substr(temperature_c, p + 2, 1)) AS c2, unicode(substr(temperature_c, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (i) % (n_cards) ELSE (i) END AS p FROM (SELECT unicode(temperature_c) AS h, unicode(temperature_c) % 16 AS w))))) AS temperature_c,
             (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(sm_clock_mhz, p + 0, 1)) AS c0, unicode(substr(sm_clock_mhz, p + 1, 1)) AS c1, unicode(substr(sm_clock_mhz, p + 2, 1)) AS c2, unicode(substr(sm_clock_mhz, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (i) % (n_cards) ELSE (i) END AS p FROM (SELECT unicode(sm_clock_mhz) AS h, unicode(sm_clock_mhz) % 16 AS w))))) AS sm_clock_mhz, (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(clock_events, p + 0, 1)) AS c0, unicode(substr(clock_events, p + 1, 1)) AS c1, unicode(substr(clock_events, p + 2, 1)) AS c2, unicode(substr(clock_events, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (i) % (n_cards) ELSE (i) END AS p FROM (SELECT unicode(clock_events) AS h, unicode(clock_events) % 16 AS w))))) AS clock_events, (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(read_errors, p + 0, 1)) AS c0, unicode(substr(read_errors, p + 1, 1)) AS c1, unicode(substr(read_errors, p + 2, 1)) AS c2, unicode(substr(read_errors, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (i) % (n_cards) ELSE (i) END AS p FROM (SELECT unicode(read_errors) AS h, unicode(read_errors) % 16 AS w))))) AS read_errors, (SELECT COALESCE(SUM(CASE WHEN p.value ->> 2 IN (0, 2) THEN COALESCE((SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(proc_mem_mib, p + 0, 1)) AS c0, unicode(substr(proc_mem_mib, p + 1, 1)) AS c1, unicode(substr(proc_mem_mib, p + 2, 1)) AS c2, unicode(substr(proc_mem_mib, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (k * json_array_length(procs) + p.key) % (json_array_length(procs)) ELSE (k * json_array_length(procs) + p.key) END AS p FROM (SELECT unicode(proc_mem_mib) AS h, unicode(proc_mem_mib) % 16 AS w))))), 101) END), 0) FROM json_each(procs) p WHERE p.value ->> 0 = slot) AS held_mib
      FROM (SELECT tk.t0_us, tk.duration_us, tk.k, c.key AS slot, c.value AS gpu_id, b.run_id,
                   b.procs, b.util_source, b.util_cpct, b.shape, b.shape_us, b.mem_util_pct,
                   b.mem_used_mib, b.power_w, b.temperature_c, b.sm_clock_mhz, b.clock_events,
                   b.read_errors, b.proc_mem_mib, json_array_length(b.cards) AS n_cards,
                   tk.k * json_array_length(b.cards) + c.key AS i
            FROM block_tick tk JOIN tick_block b ON b.id = tk.block_id
            JOIN json_each(b.cards) c));
CREATE VIEW proc_tick AS
SELECT tk.t0_us, b.cards ->> (p.value ->> 0) AS gpu_id, p.value ->> 1 AS process_id,
       p.value ->> 2 AS type, (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(b.proc_mem_mib, p + 0, 1)) AS c0, unicode(substr(b.proc_mem_mib, p + 1, 1)) AS c1, unicode(substr(b.proc_mem_mib, p + 2, 1)) AS c2, unicode(substr(b.proc_mem_mib, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (tk.k * json_array_length(b.procs) + p.key) % (json_array_length(b.procs)) ELSE (tk.k * json_array_length(b.procs) + p.key) END AS p FROM (SELECT unicode(b.proc_mem_mib) AS h, unicode(b.proc_mem_mib) % 16 AS w))))) AS mem_used_mib, (SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE CASE WHEN w > 0 THEN d0 << (20 * (w - 1)) ELSE 0 END + CASE WHEN w > 1 THEN d1 << (20 * (w - 2)) ELSE 0 END + CASE WHEN w > 2 THEN d2 << (20 * (w - 3)) ELSE 0 END + CASE WHEN w > 3 THEN d3 << (20 * (w - 4)) ELSE 0 END END FROM (SELECT w, c0, c0 - 2 - (c0 >= 57344) * 2048 AS d0, c1 - 2 - (c1 >= 57344) * 2048 AS d1, c2 - 2 - (c2 >= 57344) * 2048 AS d2, c3 - 2 - (c3 >= 57344) * 2048 AS d3 FROM (SELECT w, unicode(substr(b.proc_sm_cpct, p + 0, 1)) AS c0, unicode(substr(b.proc_sm_cpct, p + 1, 1)) AS c1, unicode(substr(b.proc_sm_cpct, p + 2, 1)) AS c2, unicode(substr(b.proc_sm_cpct, p + 3, 1)) AS c3 FROM (SELECT w, 2 + w * CASE WHEN h >= 97 THEN 0 WHEN h >= 81 THEN (tk.k * json_array_length(b.procs) + p.key) % (json_array_length(b.procs)) ELSE (tk.k * json_array_length(b.procs) + p.key) END AS p FROM (SELECT unicode(b.proc_sm_cpct) AS h, unicode(b.proc_sm_cpct) % 16 AS w))))) / 100.0 AS sm_util_pct
FROM block_tick tk JOIN tick_block b ON b.id = tk.block_id JOIN json_each(b.procs) p;
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
