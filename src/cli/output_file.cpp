// SPDX-License-Identifier: Apache-2.0
// write_user_file: lstat, refuse what is not a regular file, write a temporary file, rename.
#include "cli/output_file.hpp"

#include "core/fatal.hpp"
#include "core/fd.hpp"
#include "store/sqlite_owned.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace gua::cli {

namespace {

/// What a non-regular file is called in the refusal.
const char* kind_name(mode_t mode) {
    if (S_ISDIR(mode)) {
        return "a directory";
    }
    if (S_ISLNK(mode)) {
        return "a symbolic link";
    }
    if (S_ISFIFO(mode)) {
        return "a FIFO";
    }
    if (S_ISSOCK(mode)) {
        return "a socket";
    }
    if (S_ISCHR(mode) || S_ISBLK(mode)) {
        return "a device node";
    }
    return "not a regular file";
}

/// True when `path` (followed through symlinks) is the very file this process's stdout is.
bool is_stdout(const std::string& path) {
    struct stat out {};
    struct stat target {};
    return ::fstat(STDOUT_FILENO, &out) == 0 && ::stat(path.c_str(), &target) == 0 &&
           out.st_dev == target.st_dev && out.st_ino == target.st_ino;
}

bool write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

void write_stdout(std::string_view flag, const std::string& path, std::string_view text) {
    std::fflush(stdout);
    if (!write_all(STDOUT_FILENO, text)) {
        throw Fatal(fmt::format("{} {}: cannot write: {}", flag, path, std::strerror(errno)));
    }
}

std::string directory_of(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

mode_t new_file_mode() {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return 0666 & ~mask;
}

/// Writes `text` to a new temporary file beside `path`, gives it `mode` (and `owner`), renames it
/// over `path`. The temporary file is removed on every failure.
void replace_file(std::string_view flag, const std::string& path, std::string_view text,
                  mode_t mode, const struct stat* owner) {
    std::string name = directory_of(path) + "/.gua-output-XXXXXX";
    std::vector<char> tmpl(name.begin(), name.end());
    tmpl.push_back('\0');
    const UniqueFd fd(::mkostemp(tmpl.data(), O_CLOEXEC));
    if (!fd.valid()) {
        throw Fatal(fmt::format("{} {}: cannot write: {}", flag, path, std::strerror(errno)));
    }
    name.assign(tmpl.data());
    const bool ok = ::fchmod(fd.get(), mode) == 0 &&
                    (owner == nullptr || ::fchown(fd.get(), owner->st_uid, owner->st_gid) == 0) &&
                    write_all(fd.get(), text) && ::fsync(fd.get()) == 0 &&
                    ::rename(name.c_str(), path.c_str()) == 0;
    if (!ok) {
        const int err = errno;
        ::unlink(name.c_str());
        throw Fatal(fmt::format("{} {}: cannot write: {}", flag, path, std::strerror(err)));
    }
}

} // namespace

void write_user_file(std::string_view flag, const std::string& path, std::string_view text) {
    if (path == "-" || is_stdout(path)) {
        write_stdout(flag, path, text);
        return;
    }
    const std::string owned = store::sqlite_owned(path);
    if (!owned.empty()) {
        throw Fatal(fmt::format("{} {}: refused: the file {}", flag, path, owned), ExitCode::usage);
    }
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno != ENOENT) {
            throw Fatal(fmt::format("{} {}: cannot write: {}", flag, path, std::strerror(errno)));
        }
        replace_file(flag, path, text, new_file_mode(), nullptr);
        return;
    }
    if (!S_ISREG(st.st_mode)) {
        throw Fatal(fmt::format("{} {}: refused: it is {}; only a regular file is replaced "
                                "(- writes to standard output)",
                                flag, path, kind_name(st.st_mode)),
                    ExitCode::usage);
    }
    if (::access(path.c_str(), W_OK) != 0) {
        throw Fatal(fmt::format("{} {}: cannot write: {}", flag, path, std::strerror(errno)));
    }
    replace_file(flag, path, text, st.st_mode & 07777, ::geteuid() == 0 ? &st : nullptr);
}

} // namespace gua::cli
