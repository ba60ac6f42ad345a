// SPDX-License-Identifier: Apache-2.0
// The recommender's rules and the named thresholds that make them fire (with why each is
// defensible), plus the helpers they share. Used by recommend.cpp and by the tests.
#pragma once

#include "audit/recommend.hpp"
#include "core/units.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gua::audit::rules {

/// Idle-held above the 20 % rule (k_idle_held_policy_share) fleet-wide, or above half of one
/// card's time: a single abandoned card is worth a policy even in a large, busy fleet.
inline constexpr double k_card_idle_held_share = 0.50;
/// Culling after a timeout wins back most idle-held time; what remains is the timeout itself and
/// short pauses below it (jupyter_server's cull_idle_timeout is typically 1 h against sessions
/// idle for many hours).
inline constexpr double k_culling_recovery = 0.80;

/// Sharing pays when the idle holders use at most half of the card (a MIG 3g/4g slice or less)…
inline constexpr double k_sharing_max_footprint = 0.50;
/// …on a card idle-held for at least a fifth of its time (the 20 % rule, per card).
inline constexpr double k_sharing_min_held_share = 0.20;
/// MIG partitions a card into up to 7 compute slices; memory rounds up to whole slices.
inline constexpr int k_mig_slices = 7;
/// Static partitions strand some capacity, so sharing never claims more than this.
inline constexpr double k_sharing_max_recovery = 0.75;

/// A time-of-day pattern needs at least one whole day of data.
inline constexpr DurationUs k_off_hours_min_recorded_us = 24 * k_us_per_hour;
/// Off-hours must be mostly waste…
inline constexpr double k_off_hours_waste_share = 0.50;
/// …and clearly more wasteful than office hours (else it is not a schedule problem), by this
/// many percentage points of measured time.
inline constexpr double k_off_hours_margin = 0.20;
/// Scheduled scale-down releases most off-hours capacity; some stays for night jobs and warm-up.
inline constexpr double k_off_hours_recovery = 0.75;

/// Efficiency rules need real work on the card: active card-ticks cover at least this share of
/// its measured time.
inline constexpr double k_min_active_share = 0.10;
/// A pattern characterises a card when it covers at least half of its active card-ticks' time.
inline constexpr double k_pattern_share = 0.50;
/// Bursty cards whose mean stays below the productive bucket (70 %) are starved, not saturated.
inline constexpr double k_dataloader_max_util_pct = 70.0;
/// DataLoader workers, pinned memory and prefetching typically hide most input stalls; DALI
/// moves decoding to the GPU. Some stall (synchronisation, checkpoints) stays.
inline constexpr double k_dataloader_recovery = 0.60;
/// Larger batches (and AMP to fit them) roughly double throughput of a card steady at 20–60 %;
/// half the unused capacity is a conservative claim.
inline constexpr double k_batch_recovery = 0.50;
/// Memory counts as nearly full when the holders keep at least this share of it while active.
inline constexpr double k_memory_full_share = 0.90;
/// Gradient checkpointing recomputes activations (about 20–30 % more compute), so it wins back
/// less of the unused capacity than a plain larger batch.
inline constexpr double k_memory_full_recovery = 0.35;
/// BF16/FP16 autocast on Tensor Cores runs FP32-bound training 1.5–3× faster; 0.30 of the
/// compute-bound time is the low end (a 1.43× speed-up).
inline constexpr double k_compute_bound_recovery = 0.30;

/// A card of an allocation counts as unused by it when allocated-unused fills at least half of the
/// time the allocation held it: the job asked for a GPU its work did not need.
inline constexpr double k_allocation_unused_card_share = 0.50;
/// Requesting only the GPUs the work uses (fewer in --gres, per step, or a MIG slice) releases
/// most of that time; some stays where a job's later phase needs the card.
inline constexpr double k_allocation_recovery = 0.80;

/// What every rule reads: the input, each pool's value per card (micro-units) and the baseline.
struct Context {
    const RecommendInput& input;
    PoolValues values;
    double baseline = 0;
};

/// Idle-held heavy → session timeouts / idle culling and gua's idle-held policy.
std::optional<Recommendation> idle_culling(const Context& ctx);
/// Small idle holders on big cards → share through MPS or MIG.
std::optional<Recommendation> gpu_sharing(const Context& ctx);
/// Waste concentrated at night and at weekends → scale down, schedule, spot instances.
std::optional<Recommendation> off_hours(const Context& ctx);
/// Underutilized and bursty (bimodal 0/100 %) → DataLoader workers, pinned memory, DALI.
std::optional<Recommendation> data_loader(const Context& ctx);
/// Underutilized and steady with free memory → larger batches, AMP to fit them, smaller SKU.
std::optional<Recommendation> larger_batches(const Context& ctx);
/// Underutilized and steady with memory nearly full → gradient checkpointing / accumulation.
std::optional<Recommendation> memory_bound(const Context& ctx);
/// Steady at ≥ 90 % → AMP / BF16 / FP8 on Tensor Cores, fused kernels.
std::optional<Recommendation> compute_bound(const Context& ctx);
/// Jobs asking for more GPUs than they use → request fewer, --gres per step, or MIG. Claims only
/// the allocated-unused pool, which no other rule claims.
std::optional<Recommendation> over_allocation(const Context& ctx);

/// Fills the derived fields of `r` from its claims: pools, addressed GPU-hours and cents,
/// fraction of the baseline and effective recovery.
void settle(const Context& ctx, Recommendation& r);

/// Measured time of a card (active + idle-held + allocated-unused + truly idle), µs.
double measured_us(const CardEvidence& card);
/// "GPU 1 (NVIDIA A100-SXM4-80GB)".
std::string card_text(const CardEvidence& card);
/// A share as a percentage with one decimal: "46.7 %".
std::string pct_text(double share);
/// The names of up to `limit` identities with the most idle-held (else active) time on `cards`,
/// with their hours: {"bob 0.0083 h", …}; names only in `names`.
std::vector<std::string> top_identities(const Context& ctx, const std::vector<std::size_t>& cards,
                                        bool idle_held, std::size_t limit,
                                        std::vector<std::string>& names);

} // namespace gua::audit::rules
