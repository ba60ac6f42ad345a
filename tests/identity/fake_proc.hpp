// SPDX-License-Identifier: Apache-2.0
// Test helper: a throw-away directory laid out like /proc, for driving identity::Resolver.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace gua::identity::testing {

/// One fake process's files; empty optional strings leave the file out.
struct FakeProcess {
    std::string comm = "python3";
    std::uint64_t start_ticks = 1000;
    std::string uid = "1000";
    std::string loginuid = "4294967295";
    std::string cgroup = "0::/user.slice/user-1000.slice/session-3.scope\n";
    std::string cmdline = std::string("python3\0train.py\0", 17);
};

/// A temporary proc root, removed on destruction.
class FakeProc {
  public:
    FakeProc() {
        std::string pattern = (std::filesystem::temp_directory_path() / "gua-proc-XXXXXX").string();
        m_root = ::mkdtemp(pattern.data()) != nullptr ? pattern : std::string{};
    }
    ~FakeProc() {
        std::error_code ignored;
        std::filesystem::remove_all(m_root, ignored);
    }
    FakeProc(const FakeProc&) = delete;
    FakeProc& operator=(const FakeProc&) = delete;

    const std::string& root() const { return m_root; }

    /// Writes (or rewrites) all files of `pid`.
    void write(std::uint32_t pid, const FakeProcess& p) const {
        const std::string id = std::to_string(pid);
        write_file(pid, "stat",
                   id + " (" + p.comm + ") S 1 " + id + " " + id +
                       " 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 " + std::to_string(p.start_ticks) +
                       " 8212480 230 18446744073709551615\n");
        write_file(pid, "status",
                   "Name:\t" + p.comm + "\nUid:\t" + p.uid + "\t" + p.uid + "\t" + p.uid + "\t" +
                       p.uid + "\nGid:\t100\t100\t100\t100\n");
        write_file(pid, "loginuid", p.loginuid);
        write_file(pid, "cgroup", p.cgroup);
        write_file(pid, "cmdline", p.cmdline);
    }
    void write_file(std::uint32_t pid, const std::string& name, const std::string& text) const {
        const auto dir = std::filesystem::path(m_root) / std::to_string(pid);
        std::filesystem::create_directories(dir);
        std::ofstream(dir / name, std::ios::binary | std::ios::trunc) << text;
    }
    void remove_file(std::uint32_t pid, const std::string& name) const {
        std::filesystem::remove(std::filesystem::path(m_root) / std::to_string(pid) / name);
    }
    void remove(std::uint32_t pid) const {
        std::filesystem::remove_all(std::filesystem::path(m_root) / std::to_string(pid));
    }

  private:
    std::string m_root;
};

} // namespace gua::identity::testing
