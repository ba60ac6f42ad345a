// store::Reader: the dimension tables and a chunked, ordered scan of card-ticks for reports.
#pragma once

#include "audit/card_tick.hpp"
#include "store/database.hpp"
#include "telemetry/identity.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gua::store {

/// A row of the run table.
struct RunRow {
    std::int64_t id = 0;
    std::string host;
    std::string driver_version;
    std::string source;
    std::string gua_version;
    DurationUs interval_us = 0;
    double active_threshold_pct = 10.0;
    TimeUs started_us = 0;
    std::optional<TimeUs> ended_us;
};

/// A row of the gpu table. `id` is also the GPU index used in audit::CardTick.
struct GpuRow {
    std::int64_t id = 0;
    std::string uuid;
    int index = 0;
    std::string name;
    std::optional<std::int64_t> memory_total_mib;
    std::string parent_uuid;
};

/// A row of the identity table. `id` is the identity index used in audit::ProcTick.
struct IdentityRow {
    std::int64_t id = 0;
    telemetry::Identity identity;
};

/// Reads a gua database. Every query runs in short read transactions (one per day of data),
/// so a report never blocks the daemon's WAL checkpoints for long.
class Reader {
  public:
    explicit Reader(Database& db) : m_db(db) {}
    std::vector<RunRow> runs();
    std::vector<GpuRow> gpus();
    std::vector<IdentityRow> identities();
    /// First and last card-tick start times, if any.
    std::optional<std::pair<TimeUs, TimeUs>> span();
    /// Calls `fn` for each card-tick with from <= t0 < to, ordered by (t0, gpu id), with its
    /// processes (identity = identity row id). The CardTick is reused between calls.
    void scan(TimeUs from, TimeUs to, const std::function<void(const audit::CardTick&)>& fn);

  private:
    Database& m_db;
};

} // namespace gua::store
