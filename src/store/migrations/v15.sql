-- Schema 15 (frozen): per-job summaries kept after retention removes the raw card-ticks. Before
-- retention deletes tick blocks, each allocation they overlap has its figures per card added up
-- through the end of those blocks: allocation_summary holds them (one row per allocation and
-- card, additive), allocation_summarized how far they go (card-ticks starting before through_us)
-- and the thresholds they were classified with. Never edit this text: a change is a new
-- migration.
CREATE TABLE allocation_summarized (
    allocation_id INTEGER PRIMARY KEY REFERENCES allocation(id),
    through_us INTEGER NOT NULL,
    active_util_pct REAL NOT NULL,
    held_mib INTEGER NOT NULL,
    graphics_is_holder INTEGER NOT NULL
);
CREATE TABLE allocation_summary (
    allocation_id INTEGER NOT NULL REFERENCES allocation(id),
    gpu_id INTEGER NOT NULL REFERENCES gpu(id),
    allocated_us INTEGER NOT NULL,
    active_us INTEGER NOT NULL,
    idle_held_us INTEGER NOT NULL,
    unused_us INTEGER NOT NULL,
    measured_us REAL NOT NULL,
    sm_weighted REAL NOT NULL,
    peak_sm_pct REAL,
    peak_mem_mib INTEGER,
    energy_j REAL,
    PRIMARY KEY (allocation_id, gpu_id)
) WITHOUT ROWID;
