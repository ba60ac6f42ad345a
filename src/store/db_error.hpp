// SPDX-License-Identifier: Apache-2.0
// store::DbError: a statement or transaction that failed on an open database (the disk full,
// the file gone or read-only under gua, a lock held too long): what a loop that carries on after
// a store failure catches, apart from the user's errors.
#pragma once

#include "core/fatal.hpp"

#include <string>

namespace gua::store {

/// A recoverable database failure. Where nothing catches it, it ends the command like any
/// Fatal (exit code 1, its one line); the loops that carry on (the daemon's write of a tick, its
/// policy log and retention, `gua db stats` without the dbstat table) catch DbError alone, so a
/// bad flag or configuration is never taken for a failed write.
class DbError : public Fatal {
  public:
    explicit DbError(const std::string& message) : Fatal(message, ExitCode::failure) {}
};

} // namespace gua::store
