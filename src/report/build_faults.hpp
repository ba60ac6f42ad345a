// SPDX-License-Identifier: Apache-2.0
// §9's driver-fault findings, read from the fault table of the database.
#pragma once

#include "core/time.hpp"
#include "report/model.hpp"
#include "store/database.hpp"
#include "store/reader.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace gua::report {

/// Appends a finding per card and Xid code of the faults in [from, to) to §9 (when the report
/// has one); with `gpu_filter` (a gpu row id) only that card's. A fault on a card the database
/// does not know (the kernel log named an unknown PCI address) is listed under card -1. §8's
/// health remedies are made again with them.
void add_fault_findings(store::Database& db, const std::vector<store::GpuRow>& gpus,
                        std::optional<std::int64_t> gpu_filter, TimeUs from, TimeUs to,
                        ReportModel& m);

} // namespace gua::report
