// SPDX-License-Identifier: Apache-2.0
// §4 by job and the report of one job (docs/allocations.md "Jobs in the report").
#include "report/build_jobs.hpp"

#include "audit/cost.hpp"
#include "audit/job.hpp"
#include "core/fatal.hpp"
#include "core/time.hpp"
#include "report/build_allocations.hpp"
#include "report/job_report.hpp"
#include "store/job_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace gua::report {

namespace {

/// How far before an allocation's first instant a card-tick overlapping it may start.
constexpr DurationUs k_job_lead_us = k_us_per_hour;

/// One job of the window: its allocation rows (with their index in the window's table).
struct WindowJob {
    std::vector<store::AllocationRecord> records;
    std::vector<std::uint32_t> indexes;
};

JobGroupRow row_of(const audit::JobSummary& s, const store::AllocationRecord& first,
                   const std::map<std::int64_t, std::int64_t>& prices,
                   std::optional<std::int64_t> gpu) {
    JobGroupRow r;
    r.id = first.row.id;
    r.kind = first.row.kind;
    std::tie(r.owner, r.owner_kind) = allocation_owner(first.row);
    for (const audit::JobCard& c : s.cards) {
        if (gpu && c.gpu != *gpu) {
            continue;
        }
        ++r.gpus_allocated;
        r.allocated_hours += to_hours(c.allocated_us);
        r.active_hours += to_hours(c.active_us);
        r.idle_held_hours += to_hours(c.idle_held_us);
        r.allocated_unused_hours += to_hours(c.unused_us);
        r.unmeasured_hours += to_hours(c.unmeasured_us);
        if (const auto p = prices.find(c.gpu); p != prices.end()) {
            r.cost_cents += audit::cost_cents(c.allocated_us, p->second);
        }
    }
    return r;
}

/// The window's jobs keyed by (kind, id), from the window's allocation table.
std::map<std::pair<std::string, std::string>, WindowJob>
window_jobs(const std::vector<audit::AllocationRow>& rows, const std::vector<std::int64_t>& ids) {
    std::map<std::pair<std::string, std::string>, WindowJob> jobs;
    for (std::uint32_t k = 0; k < rows.size() && k < ids.size(); ++k) {
        WindowJob& j = jobs[{rows[k].kind, rows[k].id}];
        j.records.push_back(store::AllocationRecord{ids[k], rows[k]});
        j.indexes.push_back(k);
    }
    return jobs;
}

} // namespace

std::vector<JobGroupRow> job_group_rows(store::Database& db, store::Reader& reader,
                                        const BuildOptions& options,
                                        const std::vector<store::GpuRow>& gpus,
                                        std::optional<std::int64_t> gpu, std::size_t& total) {
    const std::vector<audit::AllocationRow> rows = reader.allocations(options.from, options.to);
    const auto jobs = window_jobs(rows, store::window_allocation_ids(db, options.from, options.to));
    std::vector<std::uint32_t> all(rows.size());
    for (std::uint32_t k = 0; k < all.size(); ++k) {
        all[k] = k;
    }
    // One pass over the window's raw card-ticks for every allocation in it.
    audit::JobAccumulator acc(all, options.thresholds);
    reader.scan(options.from, options.to, [&acc](const audit::CardTick& t) { acc.add(t); });
    const audit::JobPartials parts = acc.partials();
    const auto raw = reader.span();
    const TimeUs raw_first = raw ? raw->first : options.to;
    const std::map<std::int64_t, std::int64_t> prices = gpu_prices(gpus, options.pricing);
    std::vector<JobGroupRow> out;
    for (const auto& [key, job] : jobs) {
        if (options.job && key.second != *options.job) {
            continue;
        }
        if (options.job) {
            // The report of one job: its row is `gua job`'s figures.
            Result<JobFigures> f = job_figures(db, job.records, options.thresholds);
            if (f) {
                out.push_back(row_of(f.value().summary, job.records.front(), prices, gpu));
                out.back().from_summary = f.value().summary_through_us.has_value();
            }
            continue;
        }
        TimeUs begin = store::k_time_max;
        for (const store::AllocationRecord& r : job.records) {
            begin = std::min(begin, r.row.first_us);
        }
        if (std::max(begin, options.from) < raw_first) {
            // Card-ticks of the window are gone: the job's whole figures from its summary.
            Result<JobFigures> f = job_figures(db, job.records, options.thresholds);
            if (f && f.value().summary_through_us) {
                out.push_back(row_of(f.value().summary, job.records.front(), prices, gpu));
                out.back().from_summary = true;
                continue;
            }
        }
        audit::JobPartials mine;
        for (const auto& [k, p] : parts) {
            if (std::find(job.indexes.begin(), job.indexes.end(), k.first) != job.indexes.end()) {
                mine[k] = p;
            }
        }
        JobGroupRow r = row_of(audit::summarize_job(mine), job.records.front(), prices, gpu);
        if (r.gpus_allocated > 0) {
            out.push_back(std::move(r));
        }
    }
    std::sort(out.begin(), out.end(), [](const JobGroupRow& a, const JobGroupRow& b) {
        if (a.allocated_hours != b.allocated_hours) {
            return a.allocated_hours > b.allocated_hours;
        }
        return std::tie(a.kind, a.id) < std::tie(b.kind, b.id);
    });
    total = out.size();
    if (out.size() > options.top_identities) {
        out.resize(options.top_identities);
    }
    return out;
}

BuildOptions job_window(store::Database& db, const BuildOptions& options) {
    const std::vector<store::AllocationRecord> records = store::find_allocations(db, *options.job);
    if (records.empty()) {
        throw Fatal(fmt::format("--job {}: no allocation \"{}\" recorded in {} (a Slurm job id, "
                                "namespace/pod, or a reservation's name)",
                                *options.job, *options.job, db.path()),
                    ExitCode::usage);
    }
    BuildOptions o = options;
    o.from = records.front().row.first_us;
    o.to = records.front().row.last_us;
    for (const store::AllocationRecord& r : records) {
        o.from = std::min(o.from, r.row.first_us);
        o.to = std::max(o.to, r.row.last_us);
    }
    o.window_label = fmt::format("{} {}", records.front().row.kind, *options.job);
    store::Reader reader(db);
    const auto raw = reader.span();
    if (!raw || o.from < raw->first) {
        throw Fatal(fmt::format("--job {}: retention removed card-ticks of its window ({} to {}); "
                                "`gua job {}` reports it from its per-job summary",
                                *options.job, format_iso8601(o.from), format_iso8601(o.to),
                                *options.job));
    }
    return o;
}

std::vector<audit::AllocationRow> accumulate_job(store::Reader& reader, const BuildOptions& options,
                                                 std::optional<std::int64_t> gpu,
                                                 audit::WindowAccumulator& acc) {
    const TimeUs from = options.from - k_job_lead_us;
    const TimeUs to = options.to + 1;
    std::vector<audit::AllocationRow> rows = reader.allocations(from, to);
    std::vector<std::uint32_t> mine;
    for (std::uint32_t k = 0; k < rows.size(); ++k) {
        if (rows[k].id == *options.job) {
            mine.push_back(k);
        }
    }
    const audit::JobSlicer slicer(mine, options.thresholds, options.from);
    audit::CardTick slice;
    reader.scan(from, to, [&](const audit::CardTick& tick) {
        if ((!gpu || tick.gpu == *gpu) && slicer.slice(tick, slice)) {
            acc.add(slice);
        }
    });
    return rows;
}

} // namespace gua::report
