// SPDX-License-Identifier: Apache-2.0
// build_job_report and its text and JSON forms (docs/allocations.md "Jobs").
#include "report/job_report.hpp"

#include "audit/mig.hpp"
#include "core/duration.hpp"
#include "core/time.hpp"
#include "core/units.hpp"
#include "report/text_sections.hpp"
#include "store/reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace gua::report {

namespace {

/// How far before an allocation's first instant a card-tick overlapping it may start.
constexpr DurationUs k_tick_lead_us = k_us_per_hour;

double hours(DurationUs us) {
    return static_cast<double>(us) / static_cast<double>(k_us_per_hour);
}

audit::CardFacts facts_of(const store::GpuRow& g,
                          const std::map<std::string, store::GpuRow>& by_uuid) {
    audit::CardFacts f{g.uuid, g.name, g.memory_total_mib, g.parent_uuid, {}, {}};
    if (const auto it = by_uuid.find(g.parent_uuid); it != by_uuid.end()) {
        f.parent_name = it->second.name;
        f.parent_memory_total_mib = it->second.memory_total_mib;
    }
    return f;
}

/// The job's identity fields from its allocation rows.
void describe(const std::vector<store::AllocationRecord>& records, JobReport& job) {
    for (const store::AllocationRecord& rec : records) {
        const audit::AllocationRow& r = rec.row;
        if (job.kind.empty()) {
            job.kind = r.kind;
            job.user = r.user;
            job.account = r.account;
            job.begin_us = r.first_us;
            job.end_us = r.last_us;
        }
        job.begin_us = std::min(job.begin_us, r.first_us);
        job.end_us = std::max(job.end_us, r.last_us);
        if (std::find(job.hosts.begin(), job.hosts.end(), r.host) == job.hosts.end()) {
            job.hosts.push_back(r.host);
        }
    }
}

/// The raw card-ticks of the job after its summaries, as partials keyed by record position.
audit::JobPartials raw_partials(store::Database& db, store::Reader& reader,
                                const std::vector<store::AllocationRecord>& records,
                                const std::map<std::int64_t, store::StoredJobSummary>& summaries,
                                TimeUs from, TimeUs to, const audit::Thresholds& thresholds) {
    const std::vector<std::int64_t> ids = store::window_allocation_ids(db, from, to);
    std::vector<std::uint32_t> indexes;
    std::map<std::uint32_t, std::uint32_t> position;
    for (std::uint32_t k = 0; k < ids.size(); ++k) {
        for (std::uint32_t i = 0; i < records.size(); ++i) {
            if (records[i].id == ids[k]) {
                indexes.push_back(k);
                position[k] = i;
            }
        }
    }
    audit::JobAccumulator acc(indexes, thresholds);
    for (const std::uint32_t k : indexes) {
        if (const auto it = summaries.find(ids[k]); it != summaries.end()) {
            acc.start_at(k, it->second.through_us);
        }
    }
    reader.scan(from, to, [&acc](const audit::CardTick& t) { acc.add(t); });
    audit::JobPartials out;
    for (const auto& [key, part] : acc.partials()) {
        out[{position[key.first], key.second}] += part;
    }
    return out;
}

void price_cards(store::Reader& reader, const audit::Pricing& pricing,
                 const audit::JobSummary& summary, JobReport& job,
                 std::map<std::uint32_t, audit::JobCardModel>& models) {
    std::map<std::int64_t, store::GpuRow> by_id;
    std::map<std::string, store::GpuRow> by_uuid;
    for (store::GpuRow& g : reader.gpus()) {
        by_uuid[g.uuid] = g;
        by_id[g.id] = std::move(g);
    }
    for (const audit::JobCard& c : summary.cards) {
        JobReportCard card{c, {}, {}, 0, 0, 0};
        if (const auto it = by_id.find(c.gpu); it != by_id.end()) {
            card.uuid = it->second.uuid;
            card.name = it->second.name;
            card.index = it->second.index;
            models[c.gpu] =
                audit::JobCardModel{it->second.name, it->second.memory_total_mib, it->second.index};
            const std::int64_t price =
                audit::card_price(pricing, facts_of(it->second, by_uuid)).micros_per_gpu_hour;
            card.cost_cents = audit::cost_cents(c.allocated_us, price);
            card.blocked_cost_cents = audit::cost_cents(c.idle_held_us + c.unused_us, price);
        }
        job.cost_cents += card.cost_cents;
        job.blocked_cost_cents += card.blocked_cost_cents;
        job.cards.push_back(std::move(card));
    }
}

} // namespace

std::map<std::int64_t, std::int64_t> gpu_prices(const std::vector<store::GpuRow>& gpus,
                                                const audit::Pricing& pricing) {
    std::map<std::string, store::GpuRow> by_uuid;
    for (const store::GpuRow& g : gpus) {
        by_uuid[g.uuid] = g;
    }
    std::map<std::int64_t, std::int64_t> out;
    for (const store::GpuRow& g : gpus) {
        out[g.id] = audit::card_price(pricing, facts_of(g, by_uuid)).micros_per_gpu_hour;
    }
    return out;
}

Result<JobFigures> job_figures(store::Database& db,
                               const std::vector<store::AllocationRecord>& records,
                               const audit::Thresholds& thresholds) {
    JobReport job;
    describe(records, job);
    std::vector<std::int64_t> ids;
    for (const store::AllocationRecord& r : records) {
        ids.push_back(r.id);
    }
    const std::map<std::int64_t, store::StoredJobSummary> summaries =
        store::read_job_summaries(db, ids);
    JobFigures out;
    audit::JobPartials parts;
    for (std::uint32_t i = 0; i < records.size(); ++i) {
        const auto it = summaries.find(records[i].id);
        if (it == summaries.end()) {
            continue;
        }
        for (const auto& [gpu, p] : it->second.cards) {
            parts[{i, static_cast<std::uint32_t>(gpu)}] += p;
        }
        out.summary_through_us =
            std::max(out.summary_through_us.value_or(store::k_time_min), it->second.through_us);
        if (!(it->second.thresholds == thresholds)) {
            out.caveats.push_back(fmt::format(
                "the per-job summary was classified with active_util_pct {} and held_mib {}",
                it->second.thresholds.active_util_pct, it->second.thresholds.held_mib));
        }
    }
    store::Reader reader(db);
    const auto span = reader.span();
    if (span && job.end_us > span->first) {
        for (const auto& [key, p] :
             raw_partials(db, reader, records, summaries, job.begin_us - k_tick_lead_us,
                          job.end_us + 1, thresholds)) {
            parts[key] += p;
        }
        if (summaries.empty() && job.begin_us < span->first) {
            out.caveats.push_back(fmt::format(
                "card-ticks before {} were removed by retention before per-job summaries were "
                "kept: the figures cover {} to the end only",
                format_iso8601(span->first), format_iso8601(span->first)));
        }
    }
    if (parts.empty()) {
        return Error{fmt::format("{}: the card-ticks of \"{}\" ({} to {}) were removed by "
                                 "retention and no per-job summary was kept",
                                 db.path(), records.front().row.id, format_iso8601(job.begin_us),
                                 format_iso8601(job.end_us))};
    }
    out.summary = audit::summarize_job(parts);
    return out;
}

Result<JobReport> build_job_report(store::Database& db, const std::string& id,
                                   const audit::Pricing& pricing,
                                   const audit::Thresholds& thresholds) {
    const std::vector<store::AllocationRecord> records = store::find_allocations(db, id);
    if (records.empty()) {
        return Error{fmt::format("{}: no allocation \"{}\" recorded (a Slurm job id, "
                                 "namespace/pod, or a reservation's name)",
                                 db.path(), id)};
    }
    JobReport job;
    job.id = id;
    job.currency = pricing.currency;
    describe(records, job);
    Result<JobFigures> figures = job_figures(db, records, thresholds);
    if (!figures) {
        return figures.error();
    }
    store::Reader reader(db);
    std::map<std::uint32_t, audit::JobCardModel> models;
    price_cards(reader, pricing, figures.value().summary, job, models);
    job.total = figures.value().summary.total;
    const auto span = reader.span();
    job.running = span && job.end_us >= span->second;
    job.summary_through_us = figures.value().summary_through_us;
    job.caveats = figures.value().caveats;
    job.notes = audit::job_notes(figures.value().summary, models);
    return job;
}

namespace {

std::string pct_text(const std::optional<double>& v) {
    return v ? fmt::format("{:.0f} %", *v) : std::string("n/a");
}

std::string mem_text(const std::optional<std::int64_t>& mib) {
    return mib ? format_gib(static_cast<double>(*mib)) : std::string("n/a");
}

std::string card_line(const std::string& label, const audit::JobCard& c) {
    return fmt::format("{:<9} {:>10} {:>8} {:>9} {:>8} {:>10} {:>7} {:>7} {:>9}\n", label,
                       format_hours(hours(c.allocated_us)), format_hours(hours(c.active_us)),
                       format_hours(hours(c.idle_held_us)), format_hours(hours(c.unused_us)),
                       format_hours(hours(c.unmeasured_us)), pct_text(c.mean_sm_pct),
                       pct_text(c.peak_sm_pct), mem_text(c.peak_mem_mib));
}

} // namespace

std::string job_text(const JobReport& job) {
    std::string out = fmt::format("{} {}", job.kind, job.id);
    if (!job.user.empty()) {
        out += " · user " + job.user;
    }
    if (!job.account.empty()) {
        out += " · account " + job.account;
    }
    out += " · host " + fmt::format("{}", fmt::join(job.hosts, ", ")) + "\n";
    out += fmt::format(
        "allocated {} → {} ({}{}), {} GPU{}, {} used\n", format_iso8601(job.begin_us),
        format_iso8601(job.end_us), format_duration(job.end_us - job.begin_us),
        job.running ? ", still running" : "", job.cards.size(), job.cards.size() == 1 ? "" : "s",
        std::count_if(job.cards.begin(), job.cards.end(),
                      [](const JobReportCard& c) { return c.figures.used(); }));
    if (job.summary_through_us) {
        out += fmt::format("figures until {} from the per-job summary (retention removed those "
                           "card-ticks)\n",
                           format_iso8601(*job.summary_through_us));
    }
    for (const std::string& c : job.caveats) {
        out += "caveat: " + c + "\n";
    }
    out +=
        "\nGPU-hours  allocated   active idle-held   unused unmeasured mean SM peak SM  peak mem\n";
    for (const JobReportCard& c : job.cards) {
        out += card_line(fmt::format("GPU {}", c.index), c.figures);
    }
    out += card_line("total", job.total);
    if (job.total.energy_j) {
        out += fmt::format("\nenergy {:.2f} kWh\n", *job.total.energy_j / 3.6e6);
    }
    out += fmt::format("cost {} (blocked: idle-held + allocated-unused {})\n",
                       format_money(job.cost_cents, job.currency),
                       format_money(job.blocked_cost_cents, job.currency));
    if (!job.notes.empty()) {
        out += "\nnotes\n";
        for (const std::string& n : job.notes) {
            out += "- " + n + "\n";
        }
    }
    return out;
}

namespace {

nlohmann::json card_json(const audit::JobCard& c) {
    nlohmann::json j;
    j["allocated_gpu_hours"] = hours(c.allocated_us);
    j["active_gpu_hours"] = hours(c.active_us);
    j["idle_held_gpu_hours"] = hours(c.idle_held_us);
    j["allocated_unused_gpu_hours"] = hours(c.unused_us);
    j["unmeasured_gpu_hours"] = hours(c.unmeasured_us);
    j["mean_sm_pct"] = c.mean_sm_pct ? nlohmann::json(*c.mean_sm_pct) : nlohmann::json();
    j["peak_sm_pct"] = c.peak_sm_pct ? nlohmann::json(*c.peak_sm_pct) : nlohmann::json();
    j["peak_memory_mib"] = c.peak_mem_mib ? nlohmann::json(*c.peak_mem_mib) : nlohmann::json();
    j["energy_j"] = c.energy_j ? nlohmann::json(*c.energy_j) : nlohmann::json();
    return j;
}

} // namespace

nlohmann::json job_json(const JobReport& job) {
    nlohmann::json j;
    j["schema_version"] = 1;
    j["job"] = {{"id", job.id},
                {"kind", job.kind},
                {"user", job.user},
                {"account", job.account},
                {"hosts", job.hosts},
                {"running", job.running},
                {"begin", format_iso8601(job.begin_us)},
                {"end", format_iso8601(job.end_us)},
                {"gpus_allocated", job.cards.size()}};
    std::size_t used = 0;
    nlohmann::json cards = nlohmann::json::array();
    for (const JobReportCard& c : job.cards) {
        nlohmann::json card = card_json(c.figures);
        card["index"] = c.index;
        card["uuid"] = c.uuid;
        card["name"] = c.name;
        card["used"] = c.figures.used();
        card["cost"] = static_cast<double>(c.cost_cents) / 100.0;
        used += c.figures.used() ? 1 : 0;
        cards.push_back(std::move(card));
    }
    j["job"]["gpus_used"] = used;
    j["gpus"] = std::move(cards);
    j["total"] = card_json(job.total);
    j["cost"] = {{"currency", job.currency},
                 {"allocated", static_cast<double>(job.cost_cents) / 100.0},
                 {"blocked", static_cast<double>(job.blocked_cost_cents) / 100.0}};
    j["notes"] = job.notes;
    j["job"]["from_summary"] = job.summary_through_us.has_value();
    j["job"]["summary_through"] = job.summary_through_us
                                      ? nlohmann::json(format_iso8601(*job.summary_through_us))
                                      : nlohmann::json();
    j["caveats"] = job.caveats;
    return j;
}

} // namespace gua::report
