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

/// Decodes the tick blocks of a database. Not thread-safe; `db` must outlive it.
class BlockScanner {
  public:
    explicit BlockScanner(Database& db);
    /// Calls `fn` once per UTC hour that has card-ticks with from <= t0 < to, in time order,
    /// with that hour's card-ticks in the window sorted by (t0, gpu id). Throws Fatal for a
    /// malformed block. Runs inside the caller's transaction, if any.
    void scan(TimeUs from, TimeUs to, const std::function<void(const DecodedTicks&)>& fn);

  private:
    Database& m_db;
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
