// SPDX-License-Identifier: Apache-2.0
// The HTML report's building blocks: escaping, numbers marked with the JSON report's field names,
// and the sections rendered outside html.cpp (charts, money, health).
#pragma once

#include "report/model.hpp"

#include <array>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace gua::report::html {

/// `text` with & < > " ' replaced by character references: safe as element text and as a quoted
/// attribute value, whatever it contains.
std::string esc(std::string_view text);

/// esc(text), with each `quoted` part (between two backticks) set as <code>.
std::string prose(std::string_view text);

/// ` data-field="FIELD" data-value="VALUE"`: the attributes that tie a displayed number to the
/// JSON report's field (a dotted path, e.g. "gpus.0.states.active") and its exact value.
std::string field(std::string_view path, double value);

/// `<span data-field… data-value…>TEXT</span>` (`text` is escaped).
std::string number(std::string_view path, double value, std::string_view text);

/// `<div class="scroll"><table>`, the caption when not empty, and the head of `columns`: a
/// title that starts with '#' heads a number column (right-aligned: class "n"; the '#' is not
/// shown). Caption and titles are HTML. Close with k_table_close.
std::string table_open(std::initializer_list<std::string_view> columns,
                       std::string_view caption = {});

/// Closes what table_open() opened.
inline constexpr std::string_view k_table_close = "</tbody></table></div>\n";

/// A number cell: `<td class="n">HTML</td>`.
std::string num_td(std::string_view html);

/// One state as the charts draw it: its name, CSS class, JSON key, share, rounded percent, hours.
struct StatePart {
    const char* name;
    const char* cls;
    const char* key;
    double share;
    double pct;
    double hours;
};

/// The states of `s` in drawing order: active, idle-held, allocated-unused (only when `alloc`),
/// truly idle, unmeasured; percents rounded together to add up to 100.
std::vector<StatePart> state_parts(const StateShares& s, bool alloc);

/// The CSS of the allocated-unused colour (class "x"), added only to reports with allocations.
extern const std::string_view k_allocation_style;

/// Appends the Allocations section: the allocation matrix, owners and use outside the
/// scheduler (only for reports with allocations).
void allocations_section(std::string& out, const ReportModel& m);

/// Appends the §1 headline bar (one SVG, a <title> per state) and its legend table.
void headline_chart(std::string& out, const ReportModel& m);

/// Appends §3's per-card state timelines over the window (one SVG per card).
void timelines(std::string& out, const ReportModel& m);

/// Appends the §5 weekday × hour heatmap (SVG with a colour scale and its legend).
void heatmap_chart(std::string& out, const ReportModel& m);

/// Appends §4: identities as stacked active / idle-held bars with their hours and cost.
void identities_chart(std::string& out, const ReportModel& m);

/// Appends §4: by job (`--group-by job`: one row per job, its GPU-hours and cost), else
/// identities_chart().
void top_section(std::string& out, const ReportModel& m);

/// Appends §6: the efficiency buckets as bars.
void efficiency_chart(std::string& out, const ReportModel& m);

/// Appends §7 Cost: per card, total, share of spend, per identity and the waste run-rate.
void cost_section(std::string& out, const ReportModel& m);

/// Appends §8 Recommendations with their evidence, and the health remedies.
void recommendations_section(std::string& out, const ReportModel& m);

/// Appends §9 Health: energy, clocks, memory, busy-but-light and findings.
void health_section(std::string& out, const ReportModel& m);

/// Appends Data coverage: recorded share, gaps and how the card time was measured.
void coverage_section(std::string& out, const ReportModel& m);

/// §2's paragraph on card-time lost to faults (docs/faults.md), by card; nothing without any.
void fault_loss_paragraph(std::string& out, const ReportModel& m);

} // namespace gua::report::html
