// SPDX-License-Identifier: Apache-2.0
// Reading gpu-usage-audit SQLite files of every schema version: v0.4 text
// timestamps, 1.0.3 daemon_run/run_id, 1.1 extra columns and gpu_device, 1.4 nullable memory and
// process_type. Columns are read by name; the file is never written.
#pragma once

#include "core/time.hpp"
#include "store/database.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gua::store {

/// Which optional parts a gpu-usage-audit file has.
struct PriorSchema {
    bool daemon_run = false;   ///< 1.0.3+: recorded intervals
    bool run_id = false;       ///< 1.0.3+: samples refer to daemon_run
    bool card_fields = false;  ///< 1.1+: gpu_index, memory_used_mb, temperature_c, power_w
    bool process_name = false; ///< 1.1+
    bool process_type = false; ///< 1.4+: graphics processes, nullable memory
    bool gpu_device = false;   ///< 1.1+: model names and total memory
    /// "0.4", "1.0.3", "1.1" or "1.4": the oldest version that has everything found.
    std::string version() const;
};

/// One gpu_sample row.
struct PriorSample {
    std::string ts; ///< as stored (the join key of process rows)
    TimeUs t0 = 0;
    std::string uuid;
    std::int64_t util_pct = 0;
    std::optional<std::int64_t> run_id;
    std::optional<std::int64_t> gpu_index;
    std::optional<std::int64_t> memory_used_mb;
    std::optional<std::int64_t> temperature_c;
    std::optional<std::int64_t> power_w;
};

/// One proc_sample row joined to its card-tick.
struct PriorProcess {
    std::int64_t pid = 0;
    std::optional<std::int64_t> mem_used_mb; ///< NULL (1.4+): the driver did not say
    std::optional<std::string> user;         ///< loginuid_user; NULL: unresolved
    std::string name;                        ///< process_name (1.1+)
    bool graphics = false;                   ///< process_type = 'graphics' (1.4+)
};

/// A daemon_run row (1.0.3+).
struct PriorRun {
    TimeUs started_us = 0;
    DurationUs interval_us = 0;
};

/// A gpu_device row (1.1+).
struct PriorDevice {
    std::string name;
    std::optional<std::int64_t> memory_total_mb;
};

/// An open gpu-usage-audit file. Throws Fatal with a one-line message naming the file when it is
/// not an SQLite database or lacks gpu_sample/proc_sample.
class PriorArtFile {
  public:
    explicit PriorArtFile(const std::string& path);
    const PriorSchema& schema() const { return m_schema; }
    /// hostname and driver_version of the host row (empty when there is none).
    std::pair<std::string, std::string> host();
    std::vector<std::string> gpu_uuids();
    std::map<std::int64_t, PriorRun> runs();
    std::map<std::string, PriorDevice> devices();
    std::uint64_t sample_count();
    /// Per GPU, the median spacing of consecutive samples without a recorded interval (run_id
    /// NULL or no daemon_run), rounded to a whole second (100 ms below 10 s, 1 ms below 1 s) to
    /// drop scheduling jitter; GPUs with fewer than two such samples are absent.
    std::map<std::string, DurationUs> inferred_intervals();

    /// The samples of one GPU in timestamp order, each with its processes.
    class Cursor {
      public:
        /// Reads the next sample; false at the end. Throws Fatal for an unreadable timestamp.
        bool next(PriorSample& sample, std::vector<PriorProcess>& processes);

      private:
        friend class PriorArtFile;
        Cursor(Database& db, const std::string& sample_sql, const std::string& proc_sql,
               const std::string& uuid);
        Database* m_db;
        Statement m_samples;
        Statement m_procs;
        bool m_have_proc = false;
        std::string m_uuid;
    };
    /// A cursor over GPU `uuid`. The file must outlive it.
    Cursor cursor(const std::string& uuid);

  private:
    Database m_db;
    PriorSchema m_schema;
    std::string m_sample_sql;
    std::string m_proc_sql;
};

/// Parses a gpu-usage-audit timestamp ("2026-05-11T00:00:00+00:00", with or without a fraction).
/// Throws Fatal naming `path` for anything else.
TimeUs parse_prior_timestamp(const std::string& text, const std::string& path);

} // namespace gua::store
