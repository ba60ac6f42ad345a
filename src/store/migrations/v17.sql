-- Schema 17 (frozen): interconnect and bus health per card-tick (docs/health.md): the NVLink
-- replay, recovery and CRC errors during the tick (the increase of the driver's totals), the
-- NVLink links present and active, the PCIe link generation and width (current and maximum) and
-- the row remapper's failure flag; NULL in blocks written before and where the driver does not
-- give the reading. Never edit this text: a change is a new migration.
ALTER TABLE tick_block ADD COLUMN nvlink_replays TEXT;
ALTER TABLE tick_block ADD COLUMN nvlink_recoveries TEXT;
ALTER TABLE tick_block ADD COLUMN nvlink_crc_errors TEXT;
ALTER TABLE tick_block ADD COLUMN nvlink_links TEXT;
ALTER TABLE tick_block ADD COLUMN nvlink_links_active TEXT;
ALTER TABLE tick_block ADD COLUMN pcie_gen TEXT;
ALTER TABLE tick_block ADD COLUMN pcie_gen_max TEXT;
ALTER TABLE tick_block ADD COLUMN pcie_width TEXT;
ALTER TABLE tick_block ADD COLUMN pcie_width_max TEXT;
ALTER TABLE tick_block ADD COLUMN remap_failure TEXT;
