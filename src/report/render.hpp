// SPDX-License-Identifier: Apache-2.0
// Renderers: they only format a finished ReportModel (text for terminals, JSON for machines, CSV
// for spreadsheets, HTML for browsers and print).
#pragma once

#include "report/model.hpp"

#include <string>

namespace gua::report {

/// Text rendering options.
struct TextOptions {
    int width = 60;     ///< width of the headline bar in cells
    bool color = false; ///< ANSI colours (only on a terminal, never with NO_COLOR)
};

/// The human report: §1 headline … §6 efficiency, §7 cost, §8 recommendations, the 20 % verdict
/// and data coverage.
std::string render_text(const ReportModel& model, const TextOptions& options);

/// The tables `gua report --format csv --table …` writes.
enum class CsvTable { gpus, identities, heatmap, cost };

/// One table of the report as RFC 4180 CSV (header row, CRLF line ends): §3 per GPU, §4 per
/// identity, the §5 heatmap (168 rows, empty shares where no card-tick fell), §7 cost (per GPU, the
/// total, per identity; money in currency units).
std::string render_csv(const ReportModel& model, CsvTable table);

/// The JSON report (documented in docs/report-json.md), pretty-printed, ending in a newline.
std::string render_json(const ReportModel& model);

/// The HTML report (docs/html.md): one self-contained UTF-8 page with inline CSS and SVG, no
/// script and no external resource; every string from the model is escaped, and every number is
/// marked with its JSON report field (data-field, data-value).
std::string render_html(const ReportModel& model);

} // namespace gua::report
