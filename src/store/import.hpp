// SPDX-License-Identifier: Apache-2.0
// `gua import --from gpu-usage-audit`: brings a gpu-usage-audit database into gua's store, through
// the ordinary Writer, idempotently.
#pragma once

#include "audit/card_tick.hpp"
#include "core/time.hpp"
#include "store/database.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace gua::store {

/// How to import.
struct ImportOptions {
    std::optional<DurationUs> interval; ///< overrides recorded and inferred tick lengths
    /// Called now and then with (samples read, samples in the file).
    std::function<void(std::uint64_t, std::uint64_t)> progress;
    TimeUs now = 0; ///< hours before this one get rollups at the end (0: the wall clock)
    /// The configured thresholds ([thresholds] of gua.toml): what makes an imported sample
    /// active, and what the rollups count as held.
    audit::Thresholds thresholds;
};

/// What an import did.
struct ImportSummary {
    std::string schema_version;     ///< of the gpu-usage-audit file, e.g. "1.0.3"
    std::uint64_t card_ticks = 0;   ///< card-ticks added
    std::uint64_t process_rows = 0; ///< process samples added
    std::uint64_t skipped = 0;      ///< card-ticks gua already had (an earlier import, the daemon)
    std::uint64_t gpus = 0;
    std::uint64_t recorded_interval_ticks = 0; ///< card-ticks whose length the file recorded
    std::optional<TimeUs> first;
    std::optional<TimeUs> last_end;
};

/// Imports the gpu-usage-audit database at `path` into the migrated gua database `db`. Each
/// gpu_sample row becomes a card-tick starting at its timestamp and lasting its run's recorded
/// interval (1.0.3+), else the GPU's median sample spacing, else 30 s; `interval` overrides
/// both. Identities come from loginuid_user (NULL → "unknown"). Card-ticks that start inside
/// time gua already covers for that GPU are skipped, so importing twice adds nothing. Throws
/// Fatal (one line) for a file that is not a gpu-usage-audit database.
ImportSummary import_gpu_usage_audit(const std::string& path, Database& db,
                                     const ImportOptions& options);

} // namespace gua::store
