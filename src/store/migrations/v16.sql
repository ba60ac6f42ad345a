-- Schema 16 (frozen): driver faults (Xid events from NVML and the kernel log, merged), each with
-- its card, time, code, where it was seen, the kernel log's process, and who was on the card then
-- (holders: JSON list of {pid, user, command, job, pod}). A kernel log record is stored once per
-- boot (boot_id, kmsg_seq). Never edit this text: a change is a new migration.
CREATE TABLE fault_event (
    id INTEGER PRIMARY KEY,
    run_id INTEGER REFERENCES run(id),
    gpu_uuid TEXT NOT NULL,
    pci_bus_id TEXT NOT NULL DEFAULT '',
    at_us INTEGER NOT NULL,
    xid INTEGER NOT NULL,
    sources INTEGER NOT NULL,
    pid INTEGER,
    process_name TEXT NOT NULL DEFAULT '',
    gpu_instance_id INTEGER,
    compute_instance_id INTEGER,
    message TEXT NOT NULL DEFAULT '',
    holders TEXT NOT NULL DEFAULT '[]',
    boot_id TEXT,
    kmsg_seq INTEGER
);
CREATE INDEX fault_event_at ON fault_event (at_us);
CREATE UNIQUE INDEX fault_event_kmsg ON fault_event (boot_id, kmsg_seq);
