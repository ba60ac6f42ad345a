// SPDX-License-Identifier: Apache-2.0
// Reading small /proc files with plain POSIX calls (no streams, one buffer, bounded size).
#include "identity/proc_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace gua::identity {
namespace {

constexpr std::size_t k_read_chunk = 4096;

Error errno_error(const std::string& path, int err) {
    return Error{path + ": " + std::strerror(err)};
}

} // namespace

Result<std::string> read_proc_file(const std::string& path, std::size_t max_bytes) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return errno_error(path, errno);
    }
    std::string text;
    while (text.size() < max_bytes) {
        const std::size_t old_size = text.size();
        const std::size_t want = std::min(k_read_chunk, max_bytes - old_size);
        text.resize(old_size + want);
        const ssize_t got = ::read(fd, text.data() + old_size, want);
        if (got < 0 && errno == EINTR) {
            text.resize(old_size);
            continue;
        }
        if (got < 0) {
            const int err = errno;
            ::close(fd);
            return errno_error(path, err);
        }
        text.resize(old_size + static_cast<std::size_t>(got));
        if (got == 0) {
            break;
        }
    }
    ::close(fd);
    return text;
}

} // namespace gua::identity
