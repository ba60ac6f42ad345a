// SPDX-License-Identifier: Apache-2.0
// `gua job ID`: one Slurm job or pod from the database — its window, its cards and how each was
// spent (active, idle-held, allocated-unused), with notes and cost; text and JSON.
#pragma once

#include "audit/cost.hpp"
#include "audit/job.hpp"
#include "core/result.hpp"
#include "store/database.hpp"
#include "store/job_summary.hpp"
#include "store/reader.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gua::report {

/// One card of the job with what the database knows of it.
struct JobReportCard {
    audit::JobCard figures;
    std::string uuid;
    std::string name;
    std::int64_t index = 0;              ///< NVML index
    std::int64_t cost_cents = 0;         ///< its allocated time priced
    std::int64_t blocked_cost_cents = 0; ///< its idle-held + allocated-unused time priced
};

/// Everything `gua job` prints.
struct JobReport {
    std::string id;
    std::string kind;
    std::string user;
    std::string account;
    std::vector<std::string> hosts;
    TimeUs begin_us = 0;
    TimeUs end_us = 0;
    bool running = false; ///< the allocation still held a card at the last recorded tick
    /// Set when retention removed card-ticks of the job: its figures until then come from the
    /// per-job summary kept for it (store/job_summary.hpp).
    std::optional<TimeUs> summary_through_us;
    /// What the figures cannot cover, one sentence each (card-ticks removed before summaries
    /// were kept, a summary classified with other thresholds).
    std::vector<std::string> caveats;
    std::vector<JobReportCard> cards;
    audit::JobCard total;
    std::int64_t cost_cents = 0;
    std::int64_t blocked_cost_cents = 0;
    std::string currency;
    std::vector<std::string> notes;
};

/// The figures of one job: its summary per card (cards keyed by gpu row id) and what the
/// report says about where they come from.
struct JobFigures {
    audit::JobSummary summary;
    std::optional<TimeUs> summary_through_us;
    std::vector<std::string> caveats;
};

/// The figures of the allocation rows `records` (one job): the stored per-job summaries and the
/// raw card-ticks after them. An error when neither is left.
Result<JobFigures> job_figures(store::Database& db,
                               const std::vector<store::AllocationRecord>& records,
                               const audit::Thresholds& thresholds);

/// The report of allocation `id` (a Slurm job id, "<namespace>/<pod>", a reservation's name)
/// from `db`; an error when the database has no such allocation, or no card-ticks of its window
/// (pruned by retention). `thresholds` as the report classifies card-ticks.
Result<JobReport> build_job_report(store::Database& db, const std::string& id,
                                   const audit::Pricing& pricing,
                                   const audit::Thresholds& thresholds);

/// The price of a GPU-hour of each card (by gpu row id) as §7 prices it.
std::map<std::int64_t, std::int64_t> gpu_prices(const std::vector<store::GpuRow>& gpus,
                                                const audit::Pricing& pricing);

/// The text form: a header, one line per card, the total, the notes.
std::string job_text(const JobReport& job);
/// The JSON form (docs/allocations.md "Jobs").
nlohmann::json job_json(const JobReport& job);

} // namespace gua::report
