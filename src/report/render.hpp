// Renderers: they only format a finished ReportModel (text for terminals, JSON for machines).
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

/// The JSON report (documented in docs/report-json.md), pretty-printed, ending in a newline.
std::string render_json(const ReportModel& model);

} // namespace gua::report
