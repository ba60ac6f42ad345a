// SPDX-License-Identifier: Apache-2.0
// `gua report --group-by job` (§4 by job) and `gua report --job ID` (the report of one job's
// share of its cards over its window): the per-job parts of report building.
#pragma once

#include "audit/card_tick.hpp"
#include "audit/window.hpp"
#include "report/build.hpp"
#include "report/model.hpp"
#include "store/database.hpp"
#include "store/reader.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace gua::report {

/// The jobs that held a card during [options.from, options.to) (only card `gpu` when given),
/// each with its figures over the window from the raw card-ticks — or, where retention removed
/// them, its whole figures from the per-job summary — sorted by allocated GPU-hours, the top
/// options.top_identities; `total` gets the count before truncation.
std::vector<JobGroupRow> job_group_rows(store::Database& db, store::Reader& reader,
                                        const BuildOptions& options,
                                        const std::vector<store::GpuRow>& gpus,
                                        std::optional<std::int64_t> gpu, std::size_t& total);

/// The window of --job ID: `options` with from and to set to the job's allocation window and its
/// label. Throws Fatal when no allocation has that id (usage error), or when retention removed
/// card-ticks of its window (pointing to `gua job ID`, which reports it from its summary).
BuildOptions job_window(store::Database& db, const BuildOptions& options);

/// Feeds `acc` the job's share of every card-tick of its window (only card `gpu` when given)
/// and returns the allocation table those slices index.
std::vector<audit::AllocationRow> accumulate_job(store::Reader& reader, const BuildOptions& options,
                                                 std::optional<std::int64_t> gpu,
                                                 audit::WindowAccumulator& acc);

} // namespace gua::report
