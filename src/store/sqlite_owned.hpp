// SPDX-License-Identifier: Apache-2.0
// Files that SQLite owns (a database, its WAL, shared-memory index or rollback journal): commands
// that write a file the user names refuse them, so a typo cannot destroy recorded data.
#pragma once

#include <string>

namespace gua::store {

/// Why SQLite owns `path`, as the end of a sentence ("is an SQLite database"); empty when it does
/// not. Looks at the first bytes of a regular file (the database, WAL and journal magic numbers)
/// and at the name: "<db>-wal", "<db>-shm" and "<db>-journal" belong to an SQLite database <db>
/// that exists, whether or not they exist yet. Reads without following a final symlink and
/// without blocking; never throws.
std::string sqlite_owned(const std::string& path);

} // namespace gua::store
