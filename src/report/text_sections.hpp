// Text sections rendered outside text.cpp: §7 cost and §8 recommendations, and money formatting.
#pragma once

#include "report/model.hpp"

#include <cstdint>
#include <string>

namespace gua::report {

/// Formats cents in `currency`: "$1,234.56" for USD (also € EUR, £ GBP), else "CHF 1,234.56".
std::string format_money(std::int64_t cents, const std::string& currency);

/// Appends §7 Cost.
void render_cost_text(std::string& out, const ReportModel& m);

/// Appends §8 Recommendations, ending with the one-line combination of their savings.
void render_recommendations_text(std::string& out, const ReportModel& m);

} // namespace gua::report
