// SPDX-License-Identifier: Apache-2.0
// The report's tables as CSV (RFC 4180) for spreadsheets: one table per call, a header row, CRLF
// line ends, fields quoted only where they must be. Numbers are unrounded; money is in currency
// units with two decimals, exact from the report's integer cents.
#include "core/printable.hpp"
#include "report/render.hpp"

#include <fmt/format.h>

#include <cstdlib>

namespace gua::report {

namespace csv { // named after the file: unique in a unity batch

/// One RFC 4180 field: neutralised when a spreadsheet would read it as a formula
/// (spreadsheet_safe), quoted when it holds a comma, a quote or a line break.
std::string field(const std::string& raw) {
    const std::string text = spreadsheet_safe(raw);
    if (text.find_first_of(",\"\r\n") == std::string::npos) {
        return text;
    }
    std::string out = "\"";
    for (const char c : text) {
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    }
    return out + "\"";
}

/// Appends one record.
void record(std::string& out, const std::vector<std::string>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
        out += (i == 0 ? "" : ",") + field(fields[i]);
    }
    out += "\r\n";
}

std::string number(double v) {
    return fmt::format("{}", v);
}

/// Cents as currency units, e.g. -1234 → "-12.34".
std::string money(std::int64_t cents) {
    const std::int64_t whole = std::llabs(cents) / 100;
    return fmt::format("{}{}.{:02d}", cents < 0 ? "-" : "", whole, std::llabs(cents) % 100);
}

const char* const k_weekdays[7] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};

/// Appends `more` to `fields` when the report has allocations (columns added at the end, so
/// that a report without allocations keeps its columns).
std::vector<std::string> with_alloc(std::vector<std::string> fields, const ReportModel& m,
                                    std::initializer_list<std::string> more) {
    if (m.allocation) {
        fields.insert(fields.end(), more);
    }
    return fields;
}

void gpus(std::string& out, const ReportModel& m) {
    record(out, with_alloc({"host", "gpu", "uuid", "model", "active_gpu_hours",
                            "idle_held_gpu_hours", "truly_idle_gpu_hours", "unmeasured_gpu_hours",
                            "active", "idle_held", "truly_idle", "unmeasured", "samples"},
                           m, {"allocated_unused_gpu_hours", "allocated_unused"}));
    for (const GpuRow& g : m.gpus) {
        const StateShares& s = g.shares;
        record(out,
               with_alloc({g.host, std::to_string(g.index), g.uuid, g.model, number(s.active_hours),
                           number(s.idle_held_hours), number(s.truly_idle_hours),
                           number(s.unmeasured_hours), number(s.active), number(s.idle_held),
                           number(s.truly_idle), number(s.unmeasured), std::to_string(g.samples)},
                          m, {number(s.allocated_unused_hours), number(s.allocated_unused)}));
    }
}

void identities(std::string& out, const ReportModel& m) {
    record(out, {"identity", "gpu_hours", "active_gpu_hours", "idle_held_gpu_hours",
                 "idle_held_share", "idle_held_gib_hours", "samples"});
    for (const IdentityRow& r : m.identities) {
        record(out, {r.name, number(r.gpu_hours), number(r.active_hours), number(r.idle_held_hours),
                     number(r.idle_held_share), number(r.idle_held_gib_hours),
                     std::to_string(r.samples)});
    }
}

/// §4 by job (`--group-by job`), in the place of the identities: the JSON report's jobs.top.
void jobs(std::string& out, const ReportModel& m) {
    record(out, {"job", "kind", "owner", "owner_kind", "gpus_allocated", "allocated_gpu_hours",
                 "active_gpu_hours", "idle_held_gpu_hours", "allocated_unused_gpu_hours",
                 "unmeasured_gpu_hours", "currency", "cost", "from_summary"});
    for (const JobGroupRow& r : *m.jobs) {
        record(out, {r.id, r.kind, r.owner, r.owner_kind, std::to_string(r.gpus_allocated),
                     number(r.allocated_hours), number(r.active_hours), number(r.idle_held_hours),
                     number(r.allocated_unused_hours), number(r.unmeasured_hours), m.cost.currency,
                     money(r.cost_cents), r.from_summary ? "true" : "false"});
    }
}

void heatmap(std::string& out, const ReportModel& m) {
    record(out, with_alloc({"weekday", "hour", "time_zone", "card_hours", "active", "idle_held",
                            "truly_idle"},
                           m, {"allocated_unused"}));
    for (std::size_t d = 0; d < 7; ++d) {
        for (std::size_t h = 0; h < 24; ++h) {
            const HeatCell& c = m.heatmap[d][h];
            if (!c.has_data) {
                record(out,
                       with_alloc({k_weekdays[d], std::to_string(h), m.time_zone, "0", "", "", ""},
                                  m, {""}));
                continue;
            }
            record(out,
                   with_alloc({k_weekdays[d], std::to_string(h), m.time_zone, number(c.card_hours),
                               number(c.active), number(c.idle_held), number(c.truly_idle)},
                              m, {number(c.allocated_unused)}));
        }
    }
}

void cost(std::string& out, const ReportModel& m) {
    const CostSection& c = m.cost;
    record(out, with_alloc({"row", "gpu", "name", "currency", "price_per_gpu_hour", "active",
                            "idle_held", "truly_idle", "total"},
                           m, {"allocated_unused"}));
    for (const GpuCostRow& g : c.gpus) {
        record(out, with_alloc({"gpu", std::to_string(g.index), g.model, c.currency,
                                number(static_cast<double>(g.micros_per_gpu_hour) / 1e6),
                                money(g.cost.active_cents), money(g.cost.idle_held_cents),
                                money(g.cost.truly_idle_cents), money(g.cost.total_cents())},
                               m, {money(g.cost.allocated_unused_cents)}));
    }
    record(out, with_alloc({"total", "", "", c.currency, "", money(c.total.active_cents),
                            money(c.total.idle_held_cents), money(c.total.truly_idle_cents),
                            money(c.total.total_cents())},
                           m, {money(c.total.allocated_unused_cents)}));
    for (const IdentityCostRow& r : c.identities) {
        record(out,
               with_alloc({"identity", "", r.name, c.currency, "", money(r.active_cents),
                           money(r.idle_held_cents), "", money(r.active_cents + r.idle_held_cents)},
                          m, {""}));
    }
    if (m.allocation) {
        // Allocated-unused priced to its owners (a job's user, a pod's namespace).
        for (const AllocationOwnerRow& r : m.allocation->owners) {
            record(out, {"owner", "", (r.kind == "namespace" ? "namespace:" : "") + r.name,
                         c.currency, "", "", "", "", money(r.allocated_unused_cents),
                         money(r.allocated_unused_cents)});
        }
    }
}

} // namespace csv

std::string render_csv(const ReportModel& model, CsvTable table) {
    using namespace csv;
    std::string out;
    switch (table) {
    case CsvTable::gpus:
        gpus(out, model);
        break;
    case CsvTable::identities:
        if (model.jobs) {
            jobs(out, model);
        } else {
            identities(out, model);
        }
        break;
    case CsvTable::heatmap:
        heatmap(out, model);
        break;
    case CsvTable::cost:
        cost(out, model);
        break;
    }
    return out;
}

} // namespace gua::report
