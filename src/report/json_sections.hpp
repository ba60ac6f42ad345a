// JSON objects rendered outside json.cpp: `cost` (§7) and `recommendations` (§8).
#pragma once

#include "report/model.hpp"

#include <nlohmann/json.hpp>

namespace gua::report {

/// The `cost` object (docs/report-json.md).
nlohmann::json cost_json(const ReportModel& m);

/// The `recommendations` object (docs/report-json.md).
nlohmann::json recommendations_json(const ReportModel& m);

} // namespace gua::report
