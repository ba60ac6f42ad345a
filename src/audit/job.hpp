// SPDX-License-Identifier: Apache-2.0
// One allocation (a Slurm job, a pod) as a first-class subject: its window, the cards it was
// given and, per card, how that time was spent — the figures behind `gua job ID`.
#pragma once

#include "audit/allocations.hpp"
#include "audit/card_tick.hpp"
#include "audit/classify.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gua::audit {

/// One card of a job: its share of the card-ticks the job's allocation overlapped. Within a
/// card-tick the allocation's times are shared by overlap (several allocations in one tick, or
/// one that starts or ends inside it, take their part in proportion to their overlap), exactly
/// as the report's allocation owners (audit/allocations.hpp).
struct JobCard {
    std::uint32_t gpu = 0;       ///< the caller's GPU index
    DurationUs allocated_us = 0; ///< time the job held the card
    DurationUs active_us = 0;
    DurationUs idle_held_us = 0;
    DurationUs unused_us = 0;                 ///< allocated-unused
    DurationUs unmeasured_us = 0;             ///< allocated time without a utilization reading
    std::optional<double> mean_sm_pct;        ///< over the measured overlap
    std::optional<double> peak_sm_pct;        ///< the highest card-tick mean
    std::optional<std::int64_t> peak_mem_mib; ///< the most held together in one card-tick
    std::optional<double> energy_j;           ///< the overlap's part of the card's energy
    /// True when the card was active at all during the job.
    bool used() const { return active_us > 0; }
};

/// One allocation's figures on one card over some card-ticks, in a form that adds up: what a
/// JobCard is computed from, and what the per-job summary table keeps once the raw card-ticks are
/// gone (store/job_summary.hpp).
struct JobPartial {
    DurationUs allocated_us = 0;
    DurationUs active_us = 0;
    DurationUs idle_held_us = 0;
    DurationUs unused_us = 0;
    double measured_us = 0; ///< the measured overlap that weighs the mean SM utilization
    double sm_weighted = 0; ///< Σ SM utilization × measured overlap
    std::optional<double> peak_sm_pct;
    std::optional<std::int64_t> peak_mem_mib;
    std::optional<double> energy_j;
    JobPartial& operator+=(const JobPartial& o);
};

/// Partials by (allocation index, card as in CardTick::gpu).
using JobPartials = std::map<std::pair<std::uint32_t, std::uint32_t>, JobPartial>;

/// A job's figures (audit::JobAccumulator::finish).
struct JobSummary {
    std::vector<std::uint32_t> allocations; ///< the AllocationRow indexes that make up the job
    std::vector<JobCard> cards;             ///< by GPU index
    JobCard total;                          ///< all cards together (gpu unused)
    std::size_t used_cards() const;
};

/// The job's cards and total from its partials (those of every allocation in `parts`).
JobSummary summarize_job(const JobPartials& parts);

/// Adds up the card-ticks of one job. `allocations` are the indexes of the job's AllocationRows
/// (one per host it ran on). Feed every card-tick that may overlap it, in any order.
class JobAccumulator {
  public:
    JobAccumulator(std::vector<std::uint32_t> allocations, const Thresholds& thresholds);
    /// Counts allocation `allocation`'s share only of card-ticks that start at or after `t0`
    /// (its earlier ticks are already in a stored summary).
    void start_at(std::uint32_t allocation, TimeUs t0) { m_start[allocation] = t0; }
    void add(const CardTick& tick);
    /// Each allocation's figures per card so far.
    JobPartials partials() const;
    JobSummary finish() const;

  private:
    std::vector<std::uint32_t> m_allocations;
    std::vector<char> m_mask; ///< by allocation index: one of the job's
    Thresholds m_thresholds;
    std::map<std::uint32_t, TimeUs> m_start;
    std::vector<AllocationTotals> m_totals; ///< by allocation index, as the report keeps them
    JobPartials m_extra; ///< utilization, memory and energy by overlap (times from m_totals)
};

/// The part of a card-tick that belongs to one job, as a card-tick of its own: its duration is
/// the job's share of the card's allocated time, split into the same active, idle-held,
/// allocated-unused and unmeasured times that JobAccumulator gives the job for that tick (and the
/// processes' times, buckets and summed readings in proportion), all of it allocated to the job.
/// Fed to a WindowAccumulator, such slices make every report section agree with `gua job`.
class JobSlicer {
  public:
    /// `allocations` as for JobAccumulator; slices start no earlier than `begin_us`.
    JobSlicer(std::vector<std::uint32_t> allocations, const Thresholds& thresholds,
              TimeUs begin_us);
    /// The job's slice of `tick`; false (and `out` untouched) when the job has no share of it.
    bool slice(const CardTick& tick, CardTick& out) const;

  private:
    std::vector<char> m_mask; ///< by allocation index: one of the job's
    Thresholds m_thresholds;
    TimeUs m_begin_us;
};

/// What a job's notes need to know of a card.
struct JobCardModel {
    std::string name; ///< model name, e.g. "NVIDIA H100 80GB HBM3"
    std::optional<std::int64_t> memory_total_mib;
    std::int64_t index = 0; ///< the NVML index the notes name it by
};

/// What the report says about a job beyond its figures: cards never active ("used 1 of 4
/// allocated GPUs"), blocked time at or above the 20 % rule, and a MIG slice where the peak
/// memory fits the smallest one. `models` by GPU index; cards missing from it get no MIG note.
std::vector<std::string> job_notes(const JobSummary& job,
                                   const std::map<std::uint32_t, JobCardModel>& models);

/// The memory of the smallest MIG slice of a card of `model` with `memory_total_mib`, in whole
/// GiB as its profile names it ("1g.10gb" → 10): an eighth of the card (a quarter on an A30);
/// nullopt for models without MIG.
std::optional<std::int64_t> smallest_mig_slice_gib(std::string_view model,
                                                   std::int64_t memory_total_mib);

} // namespace gua::audit
