// SPDX-License-Identifier: Apache-2.0
// Where `gua free` gets its card-ticks: the running daemon's database (the window before its
// newest card-tick), or — with no daemon recording — one tick gua samples from NVML itself.
#pragma once

#include "audit/classify.hpp"
#include "core/clock.hpp"
#include "live/free.hpp"
#include "live/source.hpp"
#include "sampler/sampler.hpp"
#include "store/database.hpp"
#include "store/recent.hpp"
#include "telemetry/device_source.hpp"

#include <atomic>
#include <string>

namespace gua::live {

/// Judges every card of `recent` over the card-ticks of `db` (named `db_path`) that reach back
/// `ask.for_us` from its newest one.
FreeModel free_from_database(store::Database& db, const std::string& db_path,
                             const store::RecentState& recent, const audit::Thresholds& thresholds,
                             const FreeAsk& ask);

/// Samples one tick from `source` as `options` say (one_tick_options) and judges every card over
/// it alone: time before the sample is unmeasured. `note` says why gua samples itself.
FreeModel free_from_sample(telemetry::DeviceSource& source, const sampler::SamplerOptions& options,
                           const audit::Thresholds& thresholds, Clock& clock,
                           const std::atomic<bool>& stop, const std::string& note,
                           const FreeAsk& ask);

} // namespace gua::live
