// SPDX-License-Identifier: Apache-2.0
// Reading raw card-ticks: tick blocks decoded in canonical (t0, gpu id) order.
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
    /// Fills in the per-card fields `fields` of the card-ticks it passes on (the others unknown).
    explicit BlockScanner(Database& db, CardFieldSet fields = all_card_fields());
    /// Passes the card-ticks with from <= t0 < to to `fn` in canonical (t0, gpu id) order, in
    /// consecutive runs: each call's ticks are sorted and come after every earlier call's. A
    /// malformed block is left out and added to bad_blocks(). Reads one snapshot (the caller's
    /// transaction, if any). Memory is bounded by how far blocks overlap in time: one block's
    /// ticks while the clock runs forward, an hour's at most (a block never spans hours).
    void scan(TimeUs from, TimeUs to, const std::function<void(const DecodedTicks&)>& fn);
    /// The malformed blocks met by scan() so far, in the order met.
    const std::vector<BadBlock>& bad_blocks() const { return m_bad; }

  private:
    /// Reads, for each block of `hour` starting before `to` in scan order, the earliest tick
    /// start of that block and of every later one (a later block may hold earlier ticks).
    void load_bounds(std::int64_t hour, TimeUs to);
    /// Sorts the pending card-ticks (the first `sorted` are) and passes those that start before
    /// `bound` to `fn`.
    void pass_on(std::size_t sorted, TimeUs bound,
                 const std::function<void(const DecodedTicks&)>& fn);

    Database& m_db;
    std::vector<BadBlock> m_bad;
    Statement m_blocks;
    Statement m_starts;
    BlockRow m_row;
    BlockDecoder m_decoder;
    DecodedTicks m_pending; ///< decoded card-ticks in the window, not yet passed on
    DecodedTicks m_out;     ///< the part of m_pending passed on by one call
    DecodedTicks m_rest;    ///< the part kept back
    std::vector<std::pair<std::int64_t, TimeUs>> m_bounds; ///< (block id, earliest start from it)
    std::size_t m_next_bound = 0;
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

/// Rounds `tick` as a tick block keeps it (utilization and SM shares to 0.01 %, per-card fields
/// to their quantum, negative memory to 0), so that sums over card-ticks fed live equal, bit for
/// bit, the sums over the same card-ticks read back from the database (the exporter's restore).
void round_as_stored(audit::CardTick& tick);

/// Reads the columns of a tick_block row selected as `SELECT <block_columns_sql()> ...`.
void read_block_row(const Statement& st, BlockRow& row);
/// The column list matching read_block_row().
std::string block_columns_sql();

} // namespace gua::store
