// SPDX-License-Identifier: Apache-2.0
// Reading files and directories that a user may control (a home directory, a runtime's state):
// never following a symbolic link, never blocking on a FIFO or device, never crossing a mount.
#pragma once

#include "core/fd.hpp"
#include "core/result.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace gua::identity {

/// Who must own what is opened: any owner (nullopt), or exactly `uid`.
using Owner = std::optional<uid_t>;

/// Opens directory `path` (following symbolic links: it is the administrator's, e.g. a passwd home
/// or a configured data root) without blocking; an error names the path.
Result<UniqueFd> open_trusted_dir(const std::string& path);

/// Opens the directory `relative` ('/'-separated components, no "..") beneath directory `base`
/// one component at a time: each must be a real directory (not a symbolic link), on the same mount
/// as `base`, owned by `owner` when set. An error names the component.
Result<UniqueFd> open_dir_beneath(int base, std::string_view relative, Owner owner);

/// The contents of regular file `name` in directory `dir`, read without following a symbolic
/// link and without blocking (O_NONBLOCK|O_NOFOLLOW): an error for anything that is not a regular
/// file on `dir`'s mount, owned by `owner` when set, of at most `max_bytes` bytes (checked before
/// reading, and again while reading).
Result<std::string> read_untrusted_file(int dir, const std::string& name, std::size_t max_bytes,
                                        Owner owner);

/// read_untrusted_file() of `path`'s last component in its directory (opened with
/// open_trusted_dir()).
Result<std::string> read_untrusted_path(const std::string& path, std::size_t max_bytes);

/// The names of the entries of directory `dir` (without "." and ".."), at most `max_entries`
/// read; `complete` says whether the listing ended before that bound.
struct DirListing {
    std::vector<std::string> names;
    bool complete = true;
};
DirListing list_dir_bounded(int dir, std::size_t max_entries);

} // namespace gua::identity
