-- Schema 14 (frozen): the per-card PCIe replay counter (pcie_replays: the driver's count of PCIe
-- replays since it loaded; NULL in blocks written before), and the views that show it. Never edit
-- this text: a change is a new migration.
ALTER TABLE tick_block ADD COLUMN pcie_replays TEXT;
DROP VIEW process_tick;
DROP VIEW card_tick_state;
DROP VIEW proc_tick;
DROP VIEW card_tick;
DROP VIEW block_card;
DROP VIEW block_tick;
