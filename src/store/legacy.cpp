// Pre-release row-per-tick files: refused rather than silently emptied.
#include "store/legacy.hpp"

#include "core/fatal.hpp"

#include <fmt/format.h>

namespace gua::store {

void convert_legacy_ticks(Database& db) {
    const std::int64_t rows = db.scalar("SELECT count(*) FROM legacy_card_tick");
    if (rows == 0) {
        return;
    }
    throw Fatal(
        fmt::format("{} holds {} card-ticks in the row-per-tick layout of a gua development "
                    "build (schema 2), which this gua does not convert; it was left "
                    "unchanged — read it with the gua that wrote it",
                    db.path(), rows));
}

} // namespace gua::store
