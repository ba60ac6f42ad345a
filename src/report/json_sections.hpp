// SPDX-License-Identifier: Apache-2.0
// JSON objects rendered outside json.cpp: `cost` (§7), `recommendations` (§8) and `health` (§9).
#pragma once

#include "report/model.hpp"

#include <nlohmann/json.hpp>

namespace gua::report {

/// The `cost` object (docs/report-json.md).
nlohmann::json cost_json(const ReportModel& m);

/// The `recommendations` object (docs/report-json.md).
nlohmann::json recommendations_json(const ReportModel& m);

/// The `allocations` object (docs/report-json.md): the matrix, owners, use outside the scheduler.
nlohmann::json allocations_json(const AllocationSection& a);
/// The `jobs` object of `--group-by job` (docs/report-json.md): `top[]` and `total`.
nlohmann::json jobs_json(const std::vector<JobGroupRow>& jobs, std::size_t total);

/// The `health` object (docs/report-json.md); null for sources without health readings.
nlohmann::json health_json(const ReportModel& m);

} // namespace gua::report
