// SPDX-License-Identifier: Apache-2.0
// Where the live view comes from: the running daemon's database, or — with no daemon recording —
// gua sampling NVML itself, with idle-held streaks resumed from any recorded history.
#pragma once

#include "audit/card_tick.hpp"
#include "audit/streak.hpp"
#include "core/clock.hpp"
#include "identity/resolver.hpp"
#include "live/model.hpp"
#include "sampler/sampler.hpp"
#include "store/database.hpp"
#include "store/policy_log.hpp"
#include "store/recent.hpp"
#include "telemetry/device_source.hpp"
#include "telemetry/fault_event.hpp"

#include <atomic>
#include <map>
#include <string>
#include <vector>

namespace gua::live {

/// How the live view is computed.
struct LiveOptions {
    audit::Thresholds thresholds;
    DurationUs recent_window_us = 10 * k_us_per_minute; ///< window of the per-GPU bar
    DurationUs history_us = 10 * k_us_per_minute;       ///< window of the per-GPU history line
    DurationUs decisions_window_us = k_us_per_day;      ///< policy decisions listed
    DurationUs xid_window_us = k_us_per_day;            ///< how far back a card's last Xid shows
};

/// How to sample one tick of `length_us` with `thresholds` (set `allocations` to cross it with
/// the host's allocation sources).
sampler::SamplerOptions one_tick_options(const audit::Thresholds& thresholds, DurationUs length_us);

/// True when a daemon is recording: the newest run has not ended and the newest card-tick ended
/// less than three of its intervals before `now`.
bool daemon_is_recording(const store::RecentState& recent, TimeUs now);

/// Why gua samples NVML itself, e.g. "no daemon is recording (last tick ended 2h ago)".
std::string no_daemon_reason(const store::RecentState& recent, TimeUs now);

/// The live view from a daemon's database `db` (named `db_path`), whose recent state is `recent`.
NowModel now_from_database(store::Database& db, const std::string& db_path,
                           const store::RecentState& recent, const LiveOptions& options,
                           TimeUs now);

/// Samples a device source tick by tick for the live view. Not thread-safe.
class LiveSampler {
  public:
    /// `source` must outlive the sampler.
    LiveSampler(telemetry::DeviceSource& source, LiveOptions options);
    /// Resumes the streaks recorded in `db` (as of its newest card-ticks), starts the history
    /// lines with its card-ticks of the history window before `now` and lists its recent policy
    /// decisions and each card's last Xid (from its fault table) in every view.
    void seed(store::Database& db, const std::string& db_path, TimeUs now);
    /// Samples one tick of `length_us` (shorter when `stop` is set) and returns the view; `note`
    /// says why gua samples itself.
    NowModel sample(DurationUs length_us, Clock& clock, const std::atomic<bool>& stop,
                    const std::string& note);

  private:
    telemetry::DeviceSource& m_source;
    LiveOptions m_options;
    identity::Resolver m_resolver = identity::Resolver::of_host();
    audit::StreakBook m_book;
    audit::TrendBook m_trends;
    std::map<std::string, audit::StateTimes> m_recent;
    std::map<std::string, std::vector<audit::StateSpan>> m_timeline; ///< by card uuid
    DurationUs m_sampled_us = 0;
    std::string m_db_path;
    std::vector<store::DecisionRow> m_decisions;
    std::vector<telemetry::FaultEvent> m_faults; ///< read by seed(): no daemon adds any since
};

} // namespace gua::live
