// SPDX-License-Identifier: Apache-2.0
// Report building: store → audit::WindowAccumulator → ReportModel.
#include "report/build.hpp"

#include "audit/rescale.hpp"
#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "core/version.hpp"
#include "report/build_cost.hpp"
#include "report/build_faults.hpp"
#include "report/build_health.hpp"
#include "report/build_jobs.hpp"
#include "report/fault_loss.hpp"
#include "report/shares.hpp"
#include "report/timeline.hpp"
#include "store/policy_log.hpp"
#include "store/reader.hpp"
#include "store/run_kinds.hpp"
#include "store/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace gua::report {

namespace {

TimeUs raw_start(const std::optional<std::pair<TimeUs, TimeUs>>& raw) {
    return raw ? raw->first : std::numeric_limits<TimeUs>::max();
}

/// Host, driver and demo flag from the runs in the window, and the note when --interval
/// overrides what was recorded.
void describe_runs(const std::vector<store::RunRow>& runs, const BuildOptions& options,
                   ReportModel& m) {
    if (!runs.empty()) {
        m.host = runs.back().host;
        m.driver_version = runs.back().driver_version;
    }
    std::set<DurationUs> intervals;
    for (const store::RunRow& r : runs) {
        if (r.started_us < options.to && r.ended_us.value_or(options.to) >= options.from) {
            intervals.insert(r.interval_us);
            m.demo_data = m.demo_data || store::is_demo_source(r.source);
        }
    }
    if (!options.interval_override ||
        (intervals.size() == 1 && *intervals.begin() == *options.interval_override)) {
        return;
    }
    std::vector<std::string> recorded;
    for (DurationUs i : intervals) {
        recorded.push_back(format_duration(i));
    }
    m.notes.push_back(fmt::format(
        "--interval {} overrides the recorded interval ({}); gua records each tick's real "
        "duration, so --interval is not needed",
        format_duration(*options.interval_override),
        recorded.empty() ? "none in window" : fmt::format("{}", fmt::join(recorded, ", "))));
}

/// The store's id of the card that --gpu names (by index or uuid prefix), nullopt without
/// --gpu. Throws Fatal when it names no known card.
std::optional<std::int64_t> gpu_filter_of(const std::vector<store::GpuRow>& gpus,
                                          const BuildOptions& options, const std::string& path,
                                          ReportModel& m) {
    if (!options.gpu) {
        return std::nullopt;
    }
    // An index or a whole uuid names one card; a uuid prefix must name exactly one.
    std::vector<const store::GpuRow*> prefixed;
    for (const store::GpuRow& g : gpus) {
        if (std::to_string(g.index) == *options.gpu || g.uuid == *options.gpu) {
            m.filters.push_back("gpu=" + *options.gpu);
            return g.id;
        }
        if (g.uuid.starts_with(*options.gpu)) {
            prefixed.push_back(&g);
        }
    }
    if (prefixed.size() == 1) {
        m.filters.push_back("gpu=" + *options.gpu);
        return prefixed.front()->id;
    }
    if (prefixed.size() > 1) {
        std::vector<std::string> uuids;
        for (const store::GpuRow* g : prefixed) {
            uuids.push_back(g->uuid);
        }
        throw Fatal(fmt::format("--gpu {}: ambiguous, it begins {} uuids ({}); give more of one",
                                *options.gpu, uuids.size(), fmt::join(uuids, ", ")),
                    ExitCode::usage);
    }
    throw Fatal(fmt::format("--gpu {}: no such GPU in {} (known: {} GPUs)", *options.gpu, path,
                            gpus.size()),
                ExitCode::usage);
}

/// The identity ids of --user's name (empty without --user). Throws Fatal when none has it.
std::set<std::uint32_t> user_filter_of(const std::vector<store::IdentityRow>& identities,
                                       const BuildOptions& options, const std::string& path,
                                       ReportModel& m) {
    std::set<std::uint32_t> ids;
    if (!options.user) {
        return ids;
    }
    for (const store::IdentityRow& i : identities) {
        if (i.identity.user == *options.user) {
            ids.insert(static_cast<std::uint32_t>(i.id));
        }
    }
    if (ids.empty()) {
        throw Fatal(fmt::format("--user {}: no such user in {}", *options.user, path),
                    ExitCode::usage);
    }
    m.filters.push_back("user=" + *options.user);
    return ids;
}

/// Rollups keep the allocated-unused state but not who it was allocated to: the allocation
/// matrix, the owners and the use outside allocations of a window read partly from rollups come
/// from its raw card-ticks, with a note when the raw retention does not reach the window's start.
void raw_allocations(store::Reader& reader, const BuildOptions& options,
                     std::optional<std::int64_t> gpu_filter, audit::WindowAccumulator& acc,
                     ReportModel& m) {
    audit::WindowAccumulator raw(options.thresholds, 0, [](TimeUs) { return std::pair{0, 0}; });
    reader.scan(options.from, options.to, [&](const audit::CardTick& tick) {
        if (!gpu_filter || tick.gpu == *gpu_filter) {
            raw.add(tick);
        }
    });
    acc.take_allocations(raw);
    const auto kept = reader.span();
    if (options.from < raw_start(kept)) {
        m.notes.push_back(fmt::format(
            "the allocation matrix and owners need raw card-ticks, kept only since {}; older "
            "hours count in the allocated-unused state but not by allocation",
            kept ? format_iso8601(kept->first) : std::string("(none kept)")));
    }
}

/// Feeds the window to `acc`: whole (rollups where they are exact) without filters, else raw
/// card-ticks one by one, filtered by user, stretched by --interval.
void accumulate_window(store::Reader& reader, const BuildOptions& options,
                       std::optional<std::int64_t> gpu_filter,
                       const std::set<std::uint32_t>& user_ids, audit::WindowAccumulator& acc,
                       ReportModel& m) {
    if (user_ids.empty() && !options.interval_override) {
        const store::WindowSources sources =
            reader.accumulate(options.from, options.to, gpu_filter, acc);
        if (sources.approximate_hours > 0) {
            m.notes.push_back(fmt::format(
                "{} hours older than the raw retention come from hourly rollups computed with "
                "other thresholds or binned by UTC hour (approximate)",
                sources.approximate_hours));
        }
        if (sources.rollup_hours > 0 && !reader.allocations(options.from, options.to).empty()) {
            raw_allocations(reader, options, gpu_filter, acc, m);
        }
        return;
    }
    const auto raw = reader.span();
    const auto rolled = reader.rollup_span();
    if (rolled && (!raw || rolled->first < raw->first) && options.from < raw_start(raw)) {
        m.notes.push_back(fmt::format(
            "--user and --interval need raw card-ticks, kept only since {}; older hours are "
            "left out",
            raw ? format_iso8601(raw->first) : std::string("(none kept)")));
    }
    audit::CardTick scaled;
    reader.scan(options.from, options.to, [&](const audit::CardTick& tick) {
        if (gpu_filter && tick.gpu != *gpu_filter) {
            return;
        }
        if (!user_ids.empty() &&
            std::none_of(tick.processes.begin(), tick.processes.end(),
                         [&](const audit::ProcTick& p) { return user_ids.contains(p.identity); })) {
            return;
        }
        if (options.interval_override) {
            scaled = tick;
            audit::rescale(scaled, *options.interval_override);
            acc.add_as_recorded(scaled);
        } else {
            acc.add(tick);
        }
    });
}

/// §1–§3: the headline, each card's shares, timeline and provenance, the waste summary and the
/// efficiency buckets.
void state_sections(const audit::WindowAccumulator& acc, const std::vector<store::GpuRow>& gpus,
                    const TimelineGrid& timeline, ReportModel& m) {
    m.samples = acc.ticks();
    m.headline = shares_of(acc.states());
    const audit::StateTimes& st = acc.states();
    m.observed_card_hours = to_hours(st.active + st.idle_held + st.truly_idle +
                                     st.allocated_unused + st.lost_to_faults);
    std::vector<audit::StateTimes> card_states;
    audit::Provenance provenance;
    DurationUs overlap_us = 0;
    for (const store::GpuRow& g : gpus) {
        const auto id = static_cast<std::size_t>(g.id);
        if (id >= acc.gpus().size() || acc.gpus()[id].ticks == 0) {
            continue;
        }
        const audit::GpuTotals& t = acc.gpus()[id];
        card_states.push_back(t.states);
        provenance += t.provenance;
        overlap_us += t.overlap_us;
        m.gpus.push_back(GpuRow{g.index, g.uuid, short_uuid(g.uuid), g.name, shares_of(t.states),
                                bucket_shares(t.bucket_us), t.ticks, "",
                                provenance_of(t.states, t.provenance, t.overlap_us)});
        m.timeline.gpus.push_back(
            GpuTimeline{g.index, timeline.spans(static_cast<std::uint32_t>(id))});
    }
    m.timeline.bucket_us = timeline.bucket_us();
    m.provenance = provenance_of(st, provenance, overlap_us);
    add_provenance_notes(m.provenance, m.notes);
    m.waste = audit::compute_waste(
        card_states,
        provenance.by_source_us[static_cast<std::size_t>(telemetry::UtilSource::snapshot)]);
    m.buckets = bucket_shares(acc.bucket_us());
    DurationUs bucket_total = 0;
    for (DurationUs b : acc.bucket_us()) {
        bucket_total += b;
    }
    m.bucket_hours = to_hours(bucket_total);
    add_sample_period_note(m.provenance, m.buckets, m.demo_data, m.notes);
}

/// §4: identities grouped by user name, by team, or by Kubernetes namespace; the top N.
void identity_section(const audit::WindowAccumulator& acc,
                      const std::vector<store::IdentityRow>& identities,
                      const BuildOptions& options, ReportModel& m) {
    std::map<std::string, IdentityRow> by_group;
    for (const store::IdentityRow& i : identities) {
        const auto id = static_cast<std::size_t>(i.id);
        if (id >= acc.identities().size() || acc.identities()[id].ticks == 0) {
            continue;
        }
        const audit::IdentityTotals& t = acc.identities()[id];
        if (t.holder_ticks == 0 && t.active_us <= 0) {
            continue; // only graphics contexts (Xorg): nothing to attribute
        }
        const std::string group = options.grouping.group_of(i.identity);
        IdentityRow& row = by_group[group];
        row.name = group;
        row.active_hours += to_hours(t.active_us);
        row.idle_held_hours += to_hours(t.idle_held_us);
        row.idle_held_gib_hours += gib_hours_of_mib_ms(t.idle_held_mib_ms);
        row.samples += t.ticks;
    }
    if (!acc.identities().empty() && acc.identities()[0].ticks > 0) {
        IdentityRow& row = by_group["(no process)"];
        row.name = "(no process)";
        row.active_hours += to_hours(acc.identities()[0].active_us);
        row.samples += acc.identities()[0].ticks;
    }
    for (auto& [name, row] : by_group) {
        row.gpu_hours = row.active_hours + row.idle_held_hours;
        row.idle_held_share = row.gpu_hours > 0 ? row.idle_held_hours / row.gpu_hours : 0;
        m.identities.push_back(row);
    }
    std::sort(m.identities.begin(), m.identities.end(), [](const auto& a, const auto& b) {
        if (a.gpu_hours != b.gpu_hours) {
            return a.gpu_hours > b.gpu_hours;
        }
        return a.name < b.name;
    });
    m.identities_total = m.identities.size();
    if (m.identities.size() > options.top_identities) {
        m.identities.resize(options.top_identities);
    }
}

/// §5: the weekday × hour heatmap.
void heatmap_section(const audit::WindowAccumulator& acc, ReportModel& m) {
    for (std::size_t d = 0; d < 7; ++d) {
        for (std::size_t h = 0; h < 24; ++h) {
            m.heatmap[d][h] = heat_cell(acc.heatmap()[d][h]);
        }
    }
}

/// Coverage: first tick, last end, gaps and the share of the window with data.
void coverage_section(const audit::WindowAccumulator& acc, const BuildOptions& options,
                      ReportModel& m) {
    m.coverage.first = acc.first();
    m.coverage.last_end = acc.last_end();
    for (const audit::Gap& g : acc.gaps()) {
        m.coverage.gaps.emplace_back(g.from, g.to);
    }
    if (acc.first() && options.to > options.from) {
        m.coverage.covered_share =
            std::clamp(static_cast<double>(acc.recorded_us(options.from, options.to)) /
                           static_cast<double>(options.to - options.from),
                       0.0, 1.0);
    }
}

} // namespace

void build_sections(const audit::WindowAccumulator& acc, const WindowTables& tables,
                    const BuildOptions& options, const TimelineGrid& timeline, ReportModel& m) {
    state_sections(acc, tables.gpus, timeline, m);
    identity_section(acc, tables.identities, options, m);
    heatmap_section(acc, m);
    coverage_section(acc, options, m);
    build_cost_and_advice(acc, tables, options, acc.recorded_us(options.from, options.to), m);
    build_health(acc, tables.gpus, tables.identities, options, m);
}

ReportModel model_for_window(const BuildOptions& options, const TimeZone& tz) {
    ReportModel m;
    m.gua_version = k_version;
    m.window_from = options.from;
    m.window_to = options.to;
    m.window_label = options.window_label;
    m.time_zone = tz.name();
    m.active_threshold_pct = options.thresholds.active_util_pct;
    m.held_threshold_mib = options.thresholds.held_mib;
    return m;
}

ReportModel build_report(store::Database& db, const BuildOptions& asked, const TimeZone& tz,
                         const std::vector<audit::AllocationRow>& allocations) {
    store::check_readable(db);
    const BuildOptions options = asked.job ? job_window(db, asked) : asked;
    store::Reader reader(db);
    ReportModel m = model_for_window(options, tz);
    describe_runs(reader.runs(), options, m);

    const std::vector<store::GpuRow> gpus = reader.gpus();
    const std::optional<std::int64_t> gpu_filter = gpu_filter_of(gpus, options, db.path(), m);
    const std::vector<store::IdentityRow> identities = reader.identities();
    const std::set<std::uint32_t> user_ids = user_filter_of(identities, options, db.path(), m);

    audit::WindowAccumulator acc(options.thresholds, 0,
                                 [&tz](TimeUs t) { return tz.weekday_hour(t); });
    // The per-card timeline, from the same pass; a daily rollup's cards are drawn hour by hour
    // when the buckets are finer than its day.
    TimelineGrid timeline(options.from, options.to);
    std::vector<CoarseSpan> coarse;
    acc.set_span_sink(
        [&](std::uint32_t gpu, TimeUs from, TimeUs to, const audit::StateTimes& states) {
            if (to - from > k_us_per_hour && to - from > timeline.bucket_us()) {
                coarse.push_back(CoarseSpan{gpu, from, to, states});
            } else {
                timeline.add(gpu, from, to, states);
            }
        });
    // Idle-held time after a fault that strands the card is lost to faults, not billed.
    acc.set_fault_spans(
        fault_loss_spans(db, reader, gpus, options.thresholds, options.from, options.to));
    std::vector<audit::AllocationRow> job_table;
    if (options.job) {
        m.filters.push_back("job=" + *options.job);
        job_table = accumulate_job(reader, options, gpu_filter, acc);
    } else {
        accumulate_window(reader, options, gpu_filter, user_ids, acc, m);
    }
    add_coarse_spans(db, coarse, timeline);
    if (const std::string note = store::bad_blocks_note(reader.bad_blocks()); !note.empty()) {
        m.notes.push_back(note);
    }

    // The allocation table the card-ticks index: the caller's, else the database's own.
    const std::vector<audit::AllocationRow> table =
        options.job           ? job_table
        : allocations.empty() ? reader.allocations(options.from, options.to)
                              : allocations;
    build_sections(acc, WindowTables{gpus, identities, table}, options, timeline, m);
    add_fault_findings(db, gpus, gpu_filter, options.from, options.to, m);
    if (options.group_by_job) {
        m.jobs = job_group_rows(db, reader, options, gpus, gpu_filter, m.jobs_total);
    }
    const auto gpu = std::find_if(gpus.begin(), gpus.end(), [&](const store::GpuRow& g) {
        return gpu_filter && g.id == *gpu_filter;
    });
    m.policy = summarize_policy(store::read_decisions(db, options.from, options.to), options.user,
                                gpu != gpus.end() ? std::optional(gpu->uuid) : std::nullopt);
    return m;
}

} // namespace gua::report
