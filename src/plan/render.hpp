// SPDX-License-Identifier: Apache-2.0
// Renderers of a finished plan: text, JSON and a self-contained HTML page. They only format.
#pragma once

#include "plan/sweep.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace gua::plan {

/// The plan as JSON (docs/plan.md lists the keys).
nlohmann::json plan_json(const PlanResult& plan);
/// The plan as plain text for a terminal.
std::string plan_text(const PlanResult& plan);
/// The plan as one HTML page with its sensitivity chart (inline SVG, no scripts).
std::string plan_html(const PlanResult& plan);

/// The lines of the confidence statement, shared by every format.
std::vector<std::string> confidence_lines(const PlanResult& plan);
/// "15m", "1h", … or "none" for no policy.
std::string timeout_label(const std::optional<DurationUs>& timeout);

} // namespace gua::plan
