// SPDX-License-Identifier: Apache-2.0
// File-system faults for tests: a small tmpfs mounted for a test's lifetime, filling a file system
// up, and the daemon's stop line, which counts what a full disk kept out of the database.
#pragma once

#include <gtest/gtest.h>

#include <fcntl.h>
#include <filesystem>
#include <regex>
#include <string>
#include <sys/mount.h>
#include <unistd.h>

namespace gua::test {

/// Writes `path` until its file system is full.
inline void fill_file_system(const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    const std::string chunk(64 * 1024, 'x');
    for (std::size_t size = chunk.size(); size >= 1; size /= 4) {
        while (::write(fd, chunk.data(), size) == static_cast<ssize_t>(size)) {
        }
    }
    ::close(fd);
}

/// A tmpfs of `size` mounted at `dir` while this object lives; mounted() is false where mounting
/// is not allowed (not root, no CAP_SYS_ADMIN).
class Tmpfs {
  public:
    Tmpfs(const std::string& dir, const std::string& size) : m_dir(dir) {
        std::filesystem::create_directories(dir);
        m_mounted = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
    }
    ~Tmpfs() {
        if (m_mounted) {
            ::umount2(m_dir.c_str(), MNT_DETACH);
        }
    }
    Tmpfs(const Tmpfs&) = delete;
    Tmpfs& operator=(const Tmpfs&) = delete;
    bool mounted() const { return m_mounted; }
    /// Remounts read-only (or read-write again); false when the kernel refuses.
    bool set_read_only(bool read_only) const {
        const unsigned long flags = read_only ? MS_REMOUNT | MS_RDONLY : MS_REMOUNT;
        return ::mount("tmpfs", m_dir.c_str(), "tmpfs", flags, nullptr) == 0;
    }

  private:
    std::string m_dir;
    bool m_mounted = false;
};

/// The counts of the daemon's stop line ("gua daemon stopped after N ticks; …").
struct StopLine {
    bool found = false;
    int ticks = 0;        ///< ticks sampled
    int rows_written = 0; ///< card-tick rows this run wrote
    int rows_total = 0;   ///< card-tick rows in the file
    int not_stored = 0;   ///< ticks that failed to write
};

/// The stop line of daemon log `log` (found = false when it has none).
inline StopLine stop_line(const std::string& log) {
    static const std::regex k_line(R"(gua daemon stopped after (\d+) ticks; [^:]+: (\d+) )"
                                   R"(card-tick rows written, (\d+) in total \((\d+) )"
                                   R"(ticks failed to write and are not stored\))");
    std::smatch m;
    if (!std::regex_search(log, m, k_line)) {
        return {};
    }
    return {true, std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3]), std::stoi(m[4])};
}

} // namespace gua::test
