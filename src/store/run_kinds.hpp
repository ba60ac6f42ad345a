// SPDX-License-Identifier: Apache-2.0
// Demo data and recorded data never share a database: `gua demo`'s runs carry the source
// "synthetic:<workload>", and each writer refuses a file that holds the other kind.
#pragma once

#include "store/database.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace gua::store {

/// True for the source of a run recorded by `gua demo` ("synthetic:<workload>").
bool is_demo_source(std::string_view source);

/// How many runs of each kind a database holds.
struct RunKinds {
    std::int64_t demo = 0;       ///< runs of `gua demo` (synthetic workloads)
    std::int64_t recorded = 0;   ///< every other run: the daemon's, imports
    std::string recorded_source; ///< the source of one recorded run, for messages
};

/// Counts the runs of `db` (zeros when it has no run table yet).
RunKinds run_kinds(Database& db);

/// Counts the runs of the file at `path` without writing anything; zeros for a missing, empty or
/// foreign file (their own checks report those).
RunKinds run_kinds_of(const std::string& path);

/// Throws Fatal (exit code 2) when `path` holds recorded runs: `gua demo` never writes there.
void refuse_recorded_data(const std::string& path);

/// Throws Fatal (exit code 2) when `path` holds demo runs: the daemon and imports never write
/// there.
void refuse_demo_data(const std::string& path);

} // namespace gua::store
