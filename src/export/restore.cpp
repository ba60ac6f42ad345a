// SPDX-License-Identifier: Apache-2.0
// Counter restore: every tick block decoded (malformed ones skipped) and fed through the same
// Metrics::add the live ticks use.
#include "export/restore.hpp"

#include "store/allocations.hpp"
#include "store/raw.hpp"
#include "store/reader.hpp"

#include <fmt/format.h>

#include <unordered_map>

namespace gua::exporter {

Restored restore_from_database(store::Database& db, Metrics& metrics) {
    store::Reader reader(db);
    // Every allocation recorded, and each card-tick's share of them (blocks come in time order).
    const store::WindowAllocations allocations =
        store::read_allocations(db, store::k_time_min, store::k_time_max);
    store::AllocationShares shares(allocations);
    std::unordered_map<std::int64_t, CardLabels> cards;
    for (const store::GpuRow& g : reader.gpus()) {
        cards[g.id] = CardLabels{g.uuid, g.index, g.name};
    }
    std::vector<IdentityLabels> identities_of; // by identity id
    for (const store::IdentityRow& i : reader.identities()) {
        const auto id = static_cast<std::size_t>(i.id);
        if (identities_of.size() <= id) {
            identities_of.resize(id + 1, IdentityLabels{"unknown", {}, {}, {}});
        }
        identities_of[id] = labels_of(i.identity);
    }
    Restored restored;
    store::ProcessIdentities identities(db);
    store::Statement blocks = db.prepare(
        fmt::format("SELECT {} FROM tick_block ORDER BY id", store::block_columns_sql()));
    store::BlockRow row;
    store::DecodedTicks decoded;
    store::BlockDecoder decoder;
    audit::CardTick tick;
    metrics.begin_restore();
    while (blocks.step()) {
        store::read_block_row(blocks, row);
        decoded.clear();
        if (!decoder.decode(row, decoded)) {
            restored.bad_blocks.push_back(row.id);
            continue;
        }
        for (const store::StoredCardTick& t : decoded.ticks) {
            const auto it = cards.find(t.gpu_id);
            if (it == cards.end()) {
                continue;
            }
            store::to_audit(decoded, t, identities, tick);
            shares.fill(tick);
            metrics.add(it->second, tick, identities_of, allocations.rows);
            ++restored.card_ticks;
        }
    }
    metrics.end_restore();
    return restored;
}

} // namespace gua::exporter
