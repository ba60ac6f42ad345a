// SPDX-License-Identifier: Apache-2.0
// A fresh database file in a temporary directory, removed with the directory afterwards.
#pragma once

#include "store/database.hpp"
#include "store/schema.hpp"

#include <cstdlib>
#include <filesystem>
#include <string>

namespace gua::testing {

/// A temporary directory (mkdtemp under $TMPDIR or /tmp), removed on destruction.
class TempDir {
  public:
    TempDir() {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern =
            std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/gua-test-XXXXXX";
        m_path = mkdtemp(pattern.data()) != nullptr ? pattern : std::string("/tmp");
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    /// `name` inside the directory.
    std::string file(const std::string& name) const { return m_path + "/" + name; }

  private:
    std::string m_path;
};

/// A migrated gua database in its own temporary directory.
struct TempDb {
    TempDir dir;
    std::string path = dir.file("gua.db");
    store::Database db{path, store::OpenMode::create};
    TempDb() { store::migrate(db); }
};

} // namespace gua::testing
