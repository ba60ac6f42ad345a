// Counter restore: store::Reader::scan over all history, through the same Metrics::add.
#include "export/restore.hpp"

#include "store/reader.hpp"

#include <limits>
#include <unordered_map>

namespace gua::exporter {

std::uint64_t restore_from_database(store::Database& db, Metrics& metrics) {
    store::Reader reader(db);
    std::unordered_map<std::int64_t, CardLabels> cards;
    for (const store::GpuRow& g : reader.gpus()) {
        cards[g.id] = CardLabels{g.uuid, g.index, g.name};
    }
    std::vector<std::string> users;
    for (const store::IdentityRow& i : reader.identities()) {
        const auto id = static_cast<std::size_t>(i.id);
        if (users.size() <= id) {
            users.resize(id + 1, "unknown");
        }
        users[id] = i.identity.user;
    }
    std::uint64_t count = 0;
    metrics.begin_restore();
    reader.scan(std::numeric_limits<TimeUs>::min(), std::numeric_limits<TimeUs>::max(),
                [&](const audit::CardTick& tick) {
                    const auto it = cards.find(tick.gpu);
                    if (it != cards.end()) {
                        metrics.add(it->second, tick, users);
                        ++count;
                    }
                });
    metrics.end_restore();
    return count;
}

} // namespace gua::exporter
