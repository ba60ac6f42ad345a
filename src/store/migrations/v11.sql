-- Schema 11 (frozen): idle-held time decided poll by poll. Tick blocks gain the per-process stream
-- proc_idle_held_us (each process's part of its card's idle-held time; blocks written before read
-- it as NULL, and their idle-held time is split by memory over the tick as before). The views are
-- unchanged. Never edit this text: a change is a new migration.
ALTER TABLE tick_block ADD COLUMN proc_idle_held_us TEXT;
