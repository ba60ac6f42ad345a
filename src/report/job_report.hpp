// SPDX-License-Identifier: Apache-2.0
// `gua job ID`: one Slurm job or pod from the database — its window, its cards and how each was
// spent (active, idle-held, allocated-unused), with notes and cost; text and JSON.
#pragma once

#include "audit/cost.hpp"
#include "audit/job.hpp"
#include "core/result.hpp"
#include "store/database.hpp"

#include <nlohmann/json.hpp>

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
    std::vector<JobReportCard> cards;
    audit::JobCard total;
    std::int64_t cost_cents = 0;
    std::int64_t blocked_cost_cents = 0;
    std::string currency;
    std::vector<std::string> notes;
};

/// The report of allocation `id` (a Slurm job id, "<namespace>/<pod>", a reservation's name)
/// from `db`; an error when the database has no such allocation, or no card-ticks of its window
/// (pruned by retention). `thresholds` as the report classifies card-ticks.
Result<JobReport> build_job_report(store::Database& db, const std::string& id,
                                   const audit::Pricing& pricing,
                                   const audit::Thresholds& thresholds);

/// The text form: a header, one line per card, the total, the notes.
std::string job_text(const JobReport& job);
/// The JSON form (docs/allocations.md "Jobs").
nlohmann::json job_json(const JobReport& job);

} // namespace gua::report
