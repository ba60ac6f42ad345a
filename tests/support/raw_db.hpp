// SPDX-License-Identifier: Apache-2.0
// RawDb: a plain sqlite3 connection for tests, as an administrator's `sqlite3 gua.db` would have.
#pragma once

#include <map>
#include <string>
#include <vector>

struct sqlite3;

namespace gua::test {

/// Opens `path` with the sqlite3 C API only (no gua code). Throws std::runtime_error on errors.
class RawDb {
  public:
    explicit RawDb(const std::string& path);
    ~RawDb();
    RawDb(const RawDb&) = delete;
    RawDb& operator=(const RawDb&) = delete;

    /// Runs statements without results.
    void exec(const std::string& sql);
    /// Every row of `sql` as column name → text ("NULL" for SQL NULL).
    std::vector<std::map<std::string, std::string>> rows(const std::string& sql);
    /// The first column of the first row as text ("" when there is no row).
    std::string one(const std::string& sql);

  private:
    sqlite3* m_db = nullptr;
};

} // namespace gua::test
