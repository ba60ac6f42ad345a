// SPDX-License-Identifier: Apache-2.0
// sqlite_owned: the header magic numbers of SQLite's files and the names of a database's
// companions.
#include "store/sqlite_owned.hpp"

#include "core/fd.hpp"

#include <array>
#include <cstring>
#include <fcntl.h>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace gua::store {

namespace {

constexpr std::string_view k_database_magic{"SQLite format 3\0", 16};
constexpr std::array<unsigned char, 4> k_wal_magic_le{0x37, 0x7f, 0x06, 0x82};
constexpr std::array<unsigned char, 4> k_wal_magic_be{0x37, 0x7f, 0x06, 0x83};
constexpr std::array<unsigned char, 8> k_journal_magic{0xd9, 0xd5, 0x05, 0xf9,
                                                       0x20, 0xa1, 0x63, 0xd7};

/// The first 16 bytes of the regular file at `path` (fewer when it is shorter); empty for
/// anything else. Never follows a final symlink, never blocks on a FIFO.
std::string file_head(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return {};
    }
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid()) {
        return {};
    }
    std::array<char, 16> buf{};
    const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : std::string{};
}

template <std::size_t N>
bool has_magic(const std::string& bytes, const std::array<unsigned char, N>& magic) {
    return bytes.size() >= N && std::memcmp(bytes.data(), magic.data(), N) == 0;
}

bool is_sqlite_database(const std::string& path) {
    return file_head(path) == k_database_magic;
}

} // namespace

std::string sqlite_owned(const std::string& path) {
    const std::string bytes = file_head(path);
    if (bytes == k_database_magic) {
        return "is an SQLite database";
    }
    if (has_magic(bytes, k_wal_magic_le) || has_magic(bytes, k_wal_magic_be)) {
        return "is an SQLite write-ahead log";
    }
    if (has_magic(bytes, k_journal_magic)) {
        return "is an SQLite rollback journal";
    }
    for (const std::string_view suffix : {"-wal", "-shm", "-journal"}) {
        if (path.size() > suffix.size() && path.ends_with(suffix) &&
            is_sqlite_database(path.substr(0, path.size() - suffix.size()))) {
            return "belongs to the SQLite database " + path.substr(0, path.size() - suffix.size());
        }
    }
    return {};
}

} // namespace gua::store
