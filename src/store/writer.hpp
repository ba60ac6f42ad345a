// store::Writer: appends ticks to the database, one transaction per tick, with dimension caches.
#pragma once

#include "store/database.hpp"
#include "telemetry/tick.hpp"

#include <cstdint>
#include <string>
#include <unordered_map>

namespace gua::store {

/// Facts about one recording run (one daemon or demo start).
struct RunInfo {
    std::string host;
    std::string driver_version;
    std::string source; ///< "nvml", "synthetic:<workload>", "import:<format>"
    DurationUs interval_us = 0;
    double active_threshold_pct = 10.0;
    TimeUs started_us = 0;
};

/// Writes ticks of one run. The database must already be migrated. Not thread-safe.
class Writer {
  public:
    /// Records the run and keeps `db` (which must outlive the writer).
    Writer(Database& db, const RunInfo& run);
    /// Writes every card-tick and process-tick of `tick` in one BEGIN IMMEDIATE transaction.
    void write(const telemetry::Tick& tick);
    /// Stamps the run's end time.
    void finish(TimeUs ended_us);
    std::int64_t run_id() const { return m_run_id; }
    /// Card-tick rows written by this writer.
    std::uint64_t card_rows() const { return m_card_rows; }

  private:
    std::int64_t gpu_id(const telemetry::DeviceInfo& device);
    std::int64_t identity_id(const telemetry::Identity& identity);
    std::int64_t process_id(const telemetry::ProcessTick& p);

    Database& m_db;
    std::int64_t m_run_id = 0;
    std::uint64_t m_card_rows = 0;
    Statement m_insert_card;
    Statement m_insert_proc;
    std::unordered_map<std::string, std::pair<std::int64_t, telemetry::DeviceInfo>> m_gpus;
    std::unordered_map<std::string, std::int64_t> m_identities;
    std::unordered_map<std::string, std::int64_t> m_processes;
};

} // namespace gua::store
