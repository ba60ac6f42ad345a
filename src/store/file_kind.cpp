// SPDX-License-Identifier: Apache-2.0
// probe_file: opens the path read-only with SQLite and reads the header pragmas.
#include "store/file_kind.hpp"

#include "store/database.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <filesystem>

namespace gua::store {

namespace {

/// First column of the first row of `sql` as an integer; false on errors (e.g. not SQLite).
bool scalar(sqlite3* db, const char* sql, std::int64_t& out) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) {
        sqlite3_finalize(st);
        return false;
    }
    const int rc = sqlite3_step(st);
    out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE;
}

} // namespace

std::string not_gua_message(const std::string& path, std::int64_t application_id) {
    return application_id == 0
               ? fmt::format("{} is not a gua database (it has other tables; to bring in a "
                             "gpu-usage-audit database use `gua import`)",
                             path)
               : fmt::format("{} is not a gua database (application_id {:#x})", path,
                             application_id);
}

FileProbe probe_file(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        return FileProbe{FileKind::missing, 0, fmt::format("database {} does not exist", path)};
    }
    if (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) == 0 &&
        !ec) {
        return FileProbe{FileKind::empty, 0, {}};
    }
    sqlite3* db = nullptr;
    const ReadOnlyOpen how = read_only_open(path);
    const int rc = sqlite3_open_v2(how.name.c_str(), &db, how.flags, nullptr);
    std::int64_t app = 0;
    std::int64_t version = 0;
    std::int64_t tables = 0;
    const bool ok = rc == SQLITE_OK && scalar(db, "PRAGMA application_id", app) &&
                    scalar(db, "PRAGMA user_version", version) &&
                    scalar(db, "SELECT count(*) FROM sqlite_schema", tables);
    sqlite3_close(db);
    if (!ok) {
        return FileProbe{FileKind::foreign, 0,
                         fmt::format("{} is not a gua database (not an SQLite file)", path)};
    }
    if (app == k_application_id) {
        return FileProbe{FileKind::gua, version, {}};
    }
    if (tables == 0 && app == 0 && version == 0) {
        return FileProbe{FileKind::empty, 0, {}};
    }
    return FileProbe{FileKind::foreign, 0, not_gua_message(path, app)};
}

} // namespace gua::store
