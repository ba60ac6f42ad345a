// SPDX-License-Identifier: Apache-2.0
// What a database path holds, found out without writing anything: commands check it before they
// create, lock or convert a file.
#pragma once

#include <cstdint>
#include <string>

namespace gua::store {

/// PRAGMA application_id of every gua database ("GUA1").
inline constexpr std::int64_t k_application_id = 0x47554131;

/// The kinds of file a database path can hold.
enum class FileKind {
    missing, ///< nothing at the path
    empty,   ///< an SQLite file (or a zero-length file) without tables: a new database
    gua,     ///< a gua database of schema `FileProbe::schema_version`
    foreign, ///< anything else: another application's SQLite file or not SQLite at all
};

/// What probe_file() found.
struct FileProbe {
    FileKind kind = FileKind::missing;
    std::int64_t schema_version = 0; ///< PRAGMA user_version of a gua file
    std::string message;             ///< one line naming the path, for missing and foreign files
};

/// Looks at `path` read-only (no journal switch, no -wal/-shm left behind by this call on a
/// file without them). Never throws.
FileProbe probe_file(const std::string& path);

/// The one message for a file that is not a gua database.
std::string not_gua_message(const std::string& path, std::int64_t application_id);

} // namespace gua::store
