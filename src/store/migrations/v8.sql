-- Schema 8 (frozen): health totals of identities in the rollups. Each (hour or day, card,
-- identity) row gains an evidence BLOB with the energy of the identity's attributed time
-- (store/evidence.hpp); rows written before have it NULL, read as "no energy known" ("n/a",
-- never 0). The per-card health totals live in the card rows' evidence BLOB, which has room
-- for new fields. Never edit this text: a change is a new migration.
ALTER TABLE rollup_identity ADD COLUMN evidence BLOB;
ALTER TABLE rollup_day_identity ADD COLUMN evidence BLOB;
