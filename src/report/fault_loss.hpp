// SPDX-License-Identifier: Apache-2.0
// Card-time lost to faults at report time: the spans of each card after a hardware, driver or
// interconnect Xid, from the fault table and the stored card-ticks (audit/fault_loss.hpp).
#pragma once

#include "audit/card_tick.hpp"
#include "audit/fault_loss.hpp"
#include "core/time.hpp"
#include "store/database.hpp"
#include "store/reader.hpp"

#include <vector>

namespace gua::report {

/// How far before the window a fault is still looked for: its span may run into the window.
inline constexpr DurationUs k_fault_lookback_us = 24 * k_us_per_hour;

/// The lost spans of the faults stored in [from − k_fault_lookback_us, to) whose code strands
/// the card (audit::strands_card), on the cards of `gpus` (by gpu row id), each span decided
/// from the card's raw card-ticks up to `to`. Empty when there are none (no ticks are read).
audit::FaultSpans fault_loss_spans(store::Database& db, store::Reader& reader,
                                   const std::vector<store::GpuRow>& gpus,
                                   const audit::Thresholds& thresholds, TimeUs from, TimeUs to);

} // namespace gua::report
