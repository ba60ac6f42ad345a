// SPDX-License-Identifier: Apache-2.0
// Untrusted files: each component opened O_PATH|O_NOFOLLOW, checked with statx from the kernel's
// cached attributes (no request to a stalled file system), then reopened for reading.
#include "identity/untrusted_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gua::identity {
namespace {

constexpr std::size_t k_untrusted_chunk = 64 * 1024;

Error fail(std::string_view what, const std::string& reason) {
    return Error{std::string(what) + ": " + reason};
}

Error fail_errno(std::string_view what, int err) {
    return fail(what, std::strerror(err));
}

/// statx of an open descriptor from cached attributes only.
bool stat_fd(int fd, struct statx& st) {
    return ::statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
                   STATX_TYPE | STATX_MODE | STATX_UID | STATX_SIZE, &st) == 0;
}

/// Opens `name` in `dir` as an O_PATH descriptor (no open request reaches its file system) and
/// checks it: of type `type`, on the mount of `dir`, owned by `owner` when set.
Result<UniqueFd> open_checked(int dir, const std::string& name, mode_t type, Owner owner,
                              struct statx& st) {
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
        return fail(name, "not a plain file name");
    }
    struct statx dir_st {};
    if (!stat_fd(dir, dir_st)) {
        return fail_errno(name, errno);
    }
    UniqueFd fd(::openat(dir, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) {
        return fail_errno(name, errno);
    }
    if (!stat_fd(fd.get(), st)) {
        return fail_errno(name, errno);
    }
    if ((st.stx_mode & S_IFMT) != type) {
        return fail(name, S_ISLNK(st.stx_mode) ? "a symbolic link (not followed)"
                                               : "not a regular file or directory as expected");
    }
    const bool mount_root = (st.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0 &&
                            (st.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
    if (mount_root || st.stx_dev_major != dir_st.stx_dev_major ||
        st.stx_dev_minor != dir_st.stx_dev_minor) {
        return fail(name, "on another mount (not crossed)");
    }
    if (owner && st.stx_uid != *owner) {
        return fail(name, "owned by uid " + std::to_string(st.stx_uid) + ", not " +
                              std::to_string(*owner));
    }
    return fd;
}

/// Reads at most `max_bytes` + 1 bytes of `fd`; an error when there are more.
Result<std::string> read_bounded(int fd, const std::string& name, std::size_t max_bytes) {
    std::string text;
    for (;;) {
        const std::size_t old_size = text.size();
        const std::size_t want = std::min(k_untrusted_chunk, max_bytes + 1 - old_size);
        text.resize(old_size + want);
        const ssize_t got = ::read(fd, text.data() + old_size, want);
        if (got < 0 && errno == EINTR) {
            text.resize(old_size);
            continue;
        }
        if (got < 0) {
            return fail_errno(name, errno);
        }
        text.resize(old_size + static_cast<std::size_t>(got));
        if (text.size() > max_bytes) {
            return fail(name, "larger than " + std::to_string(max_bytes) + " bytes");
        }
        if (got == 0) {
            return text;
        }
    }
}

} // namespace

Result<UniqueFd> open_trusted_dir(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid()) {
        return fail_errno(path, errno);
    }
    return fd;
}

Result<UniqueFd> open_dir_beneath(int base, std::string_view relative, Owner owner) {
    UniqueFd current(::fcntl(base, F_DUPFD_CLOEXEC, 0));
    if (!current.valid()) {
        return fail_errno(relative, errno);
    }
    while (!relative.empty()) {
        const std::size_t slash = relative.find('/');
        const std::string name(relative.substr(0, slash));
        relative.remove_prefix(slash == std::string_view::npos ? relative.size() : slash + 1);
        if (name.empty()) {
            continue;
        }
        struct statx st {};
        Result<UniqueFd> path = open_checked(current.get(), name, S_IFDIR, owner, st);
        if (!path) {
            return path.error();
        }
        // "." of a checked O_PATH descriptor: the very directory checked, opened for reading.
        current = UniqueFd(
            ::openat(path.value().get(), ".", O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC));
        if (!current.valid()) {
            return fail_errno(name, errno);
        }
    }
    return current;
}

Result<std::string> read_untrusted_file(int dir, const std::string& name, std::size_t max_bytes,
                                        Owner owner) {
    struct statx st {};
    Result<UniqueFd> path = open_checked(dir, name, S_IFREG, owner, st);
    if (!path) {
        return path.error();
    }
    if (st.stx_size > max_bytes) {
        return fail(name, "larger than " + std::to_string(max_bytes) + " bytes");
    }
    // The checked file itself (its O_PATH descriptor pins it), now opened for reading.
    const std::string self = "/proc/self/fd/" + std::to_string(path.value().get());
    const UniqueFd fd(::open(self.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd.valid()) {
        return fail_errno(name, errno);
    }
    return read_bounded(fd.get(), name, max_bytes);
}

Result<std::string> read_untrusted_path(const std::string& path, std::size_t max_bytes) {
    const std::size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "."
                            : slash == 0               ? "/"
                                                       : path.substr(0, slash);
    const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    Result<UniqueFd> fd = open_trusted_dir(dir);
    if (!fd) {
        return fd.error();
    }
    Result<std::string> text = read_untrusted_file(fd.value().get(), name, max_bytes, std::nullopt);
    if (!text) {
        return Error{path + ": " + text.error().message};
    }
    return text;
}

DirListing list_dir_bounded(int dir, std::size_t max_entries) {
    DirListing out;
    const int copy = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
    if (copy < 0) {
        return out;
    }
    DIR* d = ::fdopendir(copy);
    if (d == nullptr) {
        ::close(copy);
        return out;
    }
    std::size_t read = 0;
    while (const dirent* e = ::readdir(d)) {
        if (++read > max_entries) {
            out.complete = false;
            break;
        }
        const std::string_view name = e->d_name;
        if (name != "." && name != "..") {
            out.names.emplace_back(name);
        }
    }
    ::closedir(d);
    return out;
}

} // namespace gua::identity
