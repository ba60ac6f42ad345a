// SPDX-License-Identifier: Apache-2.0
// The fault table (schema 16): driver faults stored as the daemon merged them, read back for the
// report's §9 and for /metrics' event counters at a daemon start.
#pragma once

#include "core/time.hpp"
#include "store/database.hpp"
#include "telemetry/fault_event.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gua::store {

/// Stores `events` of run `run_id` in one transaction; a kernel log record already stored for
/// its boot (same boot_id and kmsg_seq) is left out. Returns, per event, whether it was stored.
std::vector<bool> insert_faults(Database& db, std::int64_t run_id,
                                const std::vector<telemetry::FaultEvent>& events);

/// The faults in [from, to), oldest first; none from a file older than schema 16.
std::vector<telemetry::FaultEvent> read_faults(Database& db, TimeUs from, TimeUs to);

/// The newest kernel log sequence number stored for boot `boot_id`; nullopt when none.
std::optional<std::uint64_t> last_kmsg_seq(Database& db, const std::string& boot_id);

/// Number of faults ever stored per (card uuid, code): where /metrics' counters resume.
std::map<std::pair<std::string, int>, std::uint64_t> fault_counts(Database& db);

} // namespace gua::store
