// SPDX-License-Identifier: Apache-2.0
// NowModel: who holds each GPU right now and for how long it has been idle-held — the finished
// numbers behind `gua now` and `gua top`. Renderers only format it.
#pragma once

#include "audit/slices.hpp"
#include "core/time.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gua::live {

/// Where the numbers came from.
enum class Origin : std::uint8_t {
    daemon, ///< the running daemon's database
    sampled ///< gua sampled NVML itself (no daemon recording)
};

/// Shares of a card's recent time (fractions of measured time; all 0 when nothing measured).
struct Shares {
    double active = 0;
    double idle_held = 0;
    double truly_idle = 0;
};

/// A card's newest driver fault (Xid) of the recent window, from the daemon's fault table.
struct LastXid {
    int code = 0;
    TimeUs at = 0;
    std::string mnemonic; ///< NVIDIA's name of the code; empty when the catalog lacks it
    std::string meaning;  ///< the catalog's text (faults/catalog.hpp)
    std::string whose; ///< application | hardware | driver | interconnect | informational | unknown
    std::optional<std::uint32_t> pid; ///< the kernel log's pid, else the card's only process
    std::string command;              ///< that process's name; empty when unknown
    std::string user;                 ///< its user when the daemon resolved it; empty: unknown
};

/// One card now.
struct GpuNow {
    int index = 0;
    std::string uuid;
    std::string model;
    std::optional<double> util_pct; ///< newest tick's mean SM utilization; nullopt: n/a (MIG)
    std::optional<std::int64_t> mem_used_mib;
    std::optional<std::int64_t> mem_total_mib;
    std::string state; ///< newest tick: active | idle-held | truly-idle | n/a
    Shares recent;     ///< over the model's recent window
    /// Its classified card-ticks of the history window, oldest first (the input of recent_states).
    std::vector<audit::StateSpan> timeline;
    /// The history window cut into slices (live::slice_history), oldest first; empty until cut.
    std::vector<audit::StateSlice> recent_states;
    std::string parent_uuid;         ///< a MIG instance's GPU; empty for a whole GPU
    std::optional<LastXid> last_xid; ///< newest fault of NowModel::xid_window_us; none: nullopt
};

/// One process's holding on one card.
struct HolderNow {
    int gpu_index = 0;
    std::string gpu_uuid;
    std::uint32_t pid = 0;
    std::optional<std::uint64_t> start_ticks;
    std::string user;
    std::optional<std::uint32_t> uid;
    std::string command;
    std::string command_line; ///< argv for display (live/command_line.hpp); empty: unknown
    std::string type;         ///< compute | mps | graphics
    std::string container_id;
    std::string pod_uid;
    std::string pod_namespace;  ///< Kubernetes namespace; empty when not known
    std::string pod_name;       ///< Kubernetes pod name; empty when not known
    std::string container_name; ///< Kubernetes, Docker or Podman container name; empty: unknown
    std::string slurm_job;
    std::string jupyter_kernel;
    std::optional<std::int64_t> mem_mib;
    std::optional<double> sm_pct;
    bool idle_held = false;
    DurationUs idle_us = 0;           ///< observed continuous idle-held time (0 when not idle)
    std::optional<TimeUs> idle_since; ///< start of the streak
    /// Slope of its memory over its recent readings (audit::memory_trend); nullopt: too few.
    std::optional<double> mem_trend_mib_per_hour;
    /// When the card's free memory runs out at that slope, if it grows linearly; else nullopt.
    std::optional<DurationUs> time_to_full_us;
    /// `gua top` only (live::CpuMeter): host CPU % over the refresh interval, resident memory
    /// and parent pid from /proc; nullopt when not read (first frame, process gone).
    std::optional<double> cpu_pct;
    std::optional<std::int64_t> rss_kib;
    std::optional<std::uint32_t> ppid;
};

/// One recent policy decision.
struct DecisionNow {
    TimeUs time_us = 0;
    std::string rule;
    std::string action;
    bool dry_run = true;
    std::string verdict;
    std::string outcome;
    std::uint32_t pid = 0;
    std::string user;
    std::string command;
    std::string gpu_index;
    std::optional<std::int64_t> memory_mib;
    DurationUs idle_us = 0;
    double reclaimed_gib_hours = 0;
    std::string detail;
};

/// One row of `gua top`'s process tree (t): a holder, or an ancestor of holders.
struct TreeRow {
    int depth = 0;                     ///< 0: a root (its parent is init or unknown)
    std::optional<std::size_t> holder; ///< index in NowModel::holders; nullopt: an ancestor
    std::uint32_t pid = 0;
    std::string user;    ///< ancestors only
    std::string command; ///< ancestors only: their comm
};

/// The live view.
struct NowModel {
    int schema_version = 1;
    TimeUs now = 0;
    std::string host;
    Origin origin = Origin::daemon;
    std::string db_path;                 ///< empty when no database was read
    std::optional<TimeUs> last_tick_end; ///< end of the newest card-tick shown
    DurationUs interval_us = 0;          ///< the daemon's tick, or the sample length
    std::string note;                    ///< e.g. why gua sampled NVML itself
    DurationUs recent_window_us = 0;     ///< the window of GpuNow::recent
    DurationUs history_us = 0;           ///< the window of GpuNow::timeline, up to last_tick_end
    std::vector<GpuNow> gpus;            ///< by index
    std::vector<HolderNow> holders;      ///< idle-held memory × time first, then memory
    std::string holders_order = "idle-held memory × time first"; ///< how holders are sorted
    std::string holders_filter;         ///< only users containing this are listed; empty: all
    std::size_t holders_hidden = 0;     ///< holders the filter left out
    std::vector<DecisionNow> decisions; ///< newest first
    /// The holders under their ancestors, depth first (`gua top`'s tree view); empty: a list.
    std::vector<TreeRow> tree;
    bool host_columns = false; ///< holders carry host CPU % and RSS (`gua top`: live::CpuMeter)
    std::optional<std::uint32_t> selected_pid; ///< `gua top`: the holder row(s) marked selected
    DurationUs decisions_window_us = 0;
    DurationUs xid_window_us = 0; ///< how far back GpuNow::last_xid looks (0: no fault table read)
};

} // namespace gua::live
