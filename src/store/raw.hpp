// Reading raw card-ticks: tick blocks decoded hour by hour, in canonical (t0, gpu id) order.
#pragma once

#include "audit/card_tick.hpp"
#include "store/block.hpp"
#include "store/database.hpp"

#include <functional>
#include <vector>

namespace gua::store {

/// The earliest and latest times any stored tick can have; wider windows are clamped to them.
inline constexpr TimeUs k_time_min = -(1LL << 60);
inline constexpr TimeUs k_time_max = 1LL << 60;

/// A tick block that does not decode: left out of every reading, named by `gua db check`.
struct BadBlock {
    std::int64_t id = 0;
    std::int64_t run_id = 0;
    TimeUs t0_us = 0;
    friend bool operator==(const BadBlock&, const BadBlock&) = default;
};

/// Adds `block` to `list` unless it is there already.
void note_bad_block(std::vector<BadBlock>& list, const BadBlock& block);

/// One line for a report or a log about the blocks left out ("" when none).
std::string bad_blocks_note(const std::vector<BadBlock>& blocks);

/// Decodes the tick blocks of a database. Not thread-safe; `db` must outlive it.
class BlockScanner {
  public:
    explicit BlockScanner(Database& db);
    /// Calls `fn` once per UTC hour that has card-ticks with from <= t0 < to, in time order,
    /// with that hour's card-ticks in the window sorted by (t0, gpu id). A malformed block is
    /// left out and added to bad_blocks(). Runs inside the caller's transaction, if any.
    void scan(TimeUs from, TimeUs to, const std::function<void(const DecodedTicks&)>& fn);
    /// The malformed blocks met by scan() so far, in the order met.
    const std::vector<BadBlock>& bad_blocks() const { return m_bad; }

  private:
    Database& m_db;
    std::vector<BadBlock> m_bad;
    Statement m_blocks;
    BlockRow m_row;
    DecodedTicks m_hour;
    DecodedTicks m_window;
};

/// process id → identity id, loaded from the process table and reloaded when an id is missing.
class ProcessIdentities {
  public:
    explicit ProcessIdentities(Database& db) : m_db(db) {}
    /// The identity of process `process_id` (0 when the process is unknown).
    std::uint32_t identity_of(std::int64_t process_id);

  private:
    Database& m_db;
    std::vector<std::uint32_t> m_identity;
};

/// Fills `out` with the audit view of `tick` (one of `ticks`): gpu = gpu id, identity = identity
/// id.
void to_audit(const DecodedTicks& ticks, const StoredCardTick& tick, ProcessIdentities& identities,
              audit::CardTick& out);

/// Reads the columns of a tick_block row selected as `SELECT <block_columns_sql()> ...`.
void read_block_row(const Statement& st, BlockRow& row);
/// The column list matching read_block_row().
std::string block_columns_sql();

} // namespace gua::store
