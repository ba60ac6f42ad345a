// SPDX-License-Identifier: Apache-2.0
// TempDir: a per-test directory from mkdtemp, removed with everything in it when destroyed.
#pragma once

#include <string>

namespace gua::test {

/// Creates a fresh directory under $TMPDIR (or /tmp); throws std::runtime_error on failure.
class TempDir {
  public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::string& path() const { return m_path; }
    /// `path()/name`.
    std::string file(const std::string& name) const { return m_path + "/" + name; }

  private:
    std::string m_path;
};

} // namespace gua::test
