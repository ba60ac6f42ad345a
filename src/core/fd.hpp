// SPDX-License-Identifier: Apache-2.0
// Owned file descriptors and pidfds.
#pragma once

#include <cstdint>
#include <utility>

namespace gua {

/// An owned file descriptor: closed on destruction, move-only; -1 when none.
class UniqueFd {
  public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : m_fd(fd) {}
    UniqueFd(UniqueFd&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept;
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd();
    int get() const { return m_fd; }
    bool valid() const { return m_fd >= 0; }

  private:
    int m_fd = -1;
};

/// pidfd_open(2) for `pid`: a descriptor naming that very process (readable once it has exited),
/// or -1 with errno set (ENOSYS before Linux 5.3, EPERM under some seccomp filters, ESRCH).
/// The system call directly: glibc 2.36's <sys/pidfd.h> lacks C linkage in C++.
int open_pidfd(std::uint32_t pid);

} // namespace gua
