// SPDX-License-Identifier: Apache-2.0
// ReportModel: the finished numbers of a report. Renderers only format it.
#pragma once

#include "audit/cost.hpp"
#include "audit/health_findings.hpp"
#include "audit/recommend.hpp"
#include "audit/waste.hpp"
#include "audit/window.hpp"
#include "core/time.hpp"
#include "report/plan_link.hpp"
#include "report/policy_section.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gua::report {

/// Shares of a set of state times, as fractions of all recorded card time: active + idle-held +
/// allocated-unused + truly idle + unmeasured sum to 1 (or all 0).
struct StateShares {
    double active = 0;
    double idle_held = 0;
    double truly_idle = 0;
    double unmeasured = 0; ///< utilization or holders unknown (lost samples, MIG, failed reads)
    double active_hours = 0;
    double idle_held_hours = 0;
    double truly_idle_hours = 0;
    double unmeasured_hours = 0;
    double allocated_unused = 0; ///< allocated, cold and not held; 0 without an allocation source
    double allocated_unused_hours = 0;
    /// Idle-held time after a hardware, driver or interconnect fault (docs/faults.md): not
    /// idle-held, not billed; 0 without such faults.
    double lost_to_faults = 0;
    double lost_to_faults_hours = 0;
};

/// How recorded card time was measured, as shares of it: samples + partial + snapshot +
/// dcgm_profiling + source_unknown + unmeasured sum to 1 (or all 0). Hours are card-hours.
struct ProvenanceShares {
    double card_hours = 0;
    double samples = 0;        ///< driver sample buffers, complete
    double partial = 0;        ///< driver sample buffers of card-ticks that lost samples
    double snapshot = 0;       ///< one instantaneous reading per poll
    double dcgm_profiling = 0; ///< DCGM's graphics-engine activity (fleet reports from DCGM)
    double source_unknown = 0; ///< measured, but how was not recorded (older data, Prometheus)
    double unmeasured = 0;     ///< the headline's unmeasured share
    double samples_hours = 0;
    double partial_hours = 0;
    double snapshot_hours = 0;
    double dcgm_profiling_hours = 0;
    double source_unknown_hours = 0;
    double unmeasured_hours = 0;
    double utilization_unknown_hours = 0; ///< of unmeasured: utilization unknown
    double no_reading_hours = 0;          ///< of utilization unknown: no reading at all (MIG)
    double holders_unknown_hours = 0;     ///< of unmeasured: process lists unreadable
    /// Of unmeasured: idle, not held, while a configured allocation source was unreadable.
    double allocation_unknown_hours = 0;
    double reason_unknown_hours = 0; ///< of unmeasured: why was not recorded
    /// The most any state share can be off because of snapshot readings, in percentage points
    /// (docs/report-json.md: the snapshot share itself).
    double snapshot_error_pp = 0;
    /// Card time recorded more than once (overlapping runs for the same card), counted once.
    double overlap_hours = 0;
};

/// §3: one card.
struct GpuRow {
    int index = 0;
    std::string uuid;
    std::string short_uuid; ///< first 8 hex digits after the prefix, e.g. "GPU-0a7c3e1f"
    std::string model;
    StateShares shares;
    std::array<double, 4> buckets{}; ///< efficiency bucket shares (sum to 1 when measured)
    std::uint64_t samples = 0;
    std::string host; ///< fleet reports: the host (Prometheus instance); empty for one host
    ProvenanceShares provenance;
};

/// Fleet reports: one host's summary.
struct HostRow {
    std::string host;
    std::size_t gpus = 0;
    StateShares shares;
    std::uint64_t samples = 0;
    double covered_share = 0; ///< share of the window the host reported data for (≤ 1)
};

/// §4: one identity (a user, or a group of users).
struct IdentityRow {
    std::string name;
    double gpu_hours = 0; ///< active + idle-held hours attributed (no double counting)
    double active_hours = 0;
    double idle_held_hours = 0;
    double idle_held_share = 0; ///< idle_held_hours / gpu_hours
    double idle_held_gib_hours = 0;
    std::uint64_t samples = 0; ///< card-ticks with a process of this identity
};

/// §5: one weekday × hour cell (weekday 0 = Sunday). Empty when no card-tick fell in it.
struct HeatCell {
    bool has_data = false;
    double active = 0;
    double idle_held = 0;
    double truly_idle = 0;
    double card_hours = 0;
    double allocated_unused = 0;
};

/// One stretch of a card's timeline: its state time over [from, to) in card-hours. The rest of
/// the stretch has no data (the daemon was not recording the card).
struct TimelineSpan {
    TimeUs from = 0;
    TimeUs to = 0;
    double active_hours = 0;
    double idle_held_hours = 0;
    double truly_idle_hours = 0;
    double unmeasured_hours = 0;
    double allocated_unused_hours = 0;
};

/// One card's state over the window.
struct GpuTimeline {
    int index = 0;
    std::vector<TimelineSpan> spans; ///< stretches with data, in time order
};

/// Per-card state timelines: buckets of `bucket_us` (at most ~480 over the window), a span being
/// one bucket or, where the data is coarser (a rollup's hour or day), the buckets it covers.
struct Timeline {
    DurationUs bucket_us = 0;      ///< 0: no timeline (a source without per-card time)
    std::vector<GpuTimeline> gpus; ///< same cards and order as ReportModel::gpus
};

/// Coverage of the window by recorded data.
struct Coverage {
    std::optional<TimeUs> first;
    std::optional<TimeUs> last_end;
    std::vector<std::pair<TimeUs, TimeUs>> gaps;
    double covered_share = 0; ///< recorded wall time / window span (≤ 1)
};

/// §7: one card's cost in the window.
struct GpuCostRow {
    int index = 0;
    std::string model;
    std::int64_t micros_per_gpu_hour = 0; ///< the price applied
    audit::StateCost cost;
    /// The card's part of a whole GPU's price: 1, or a MIG instance's fraction of its parent.
    double card_fraction = 1;
    std::string price_rule; ///< how the price was found, e.g. "A100 × 3/7 (MIG 3g.40gb)"
};

/// §7: one identity's cost (its attributed active and idle-held time, priced per card).
struct IdentityCostRow {
    std::string name;
    std::int64_t active_cents = 0;
    std::int64_t idle_held_cents = 0;
};

/// Allocated-unused time of one allocation owner: a Slurm job's or reservation's user, a pod's
/// namespace (docs/allocations.md), priced at the cards it held.
struct AllocationOwnerRow {
    std::string name;            ///< user, namespace, or "(unknown)" when the source said none
    std::string kind;            ///< "user" or "namespace"
    std::size_t allocations = 0; ///< its allocations that held a card in the window
    double allocated_hours = 0;  ///< card-hours its allocations owned
    double allocated_unused_hours = 0; ///< of them, allocated-unused
    std::int64_t allocated_unused_cents = 0;
};

/// Use outside the scheduler: one identity's attributed time on cards no allocation owned.
struct UnallocatedUseRow {
    std::string name;
    double active_hours = 0;
    double idle_held_hours = 0;
};

/// §4 by job (`gua report --group-by job`): one job (its allocation rows on every host) in the
/// window.
struct JobGroupRow {
    std::string id;         ///< Slurm job id, "<namespace>/<pod>", a reservation's name
    std::string kind;       ///< "slurm-job", "pod", "reservation"
    std::string owner;      ///< the job's user, or the pod's namespace; "(unknown)"
    std::string owner_kind; ///< "user" or "namespace"
    std::size_t gpus_allocated = 0;
    double allocated_hours = 0;
    double active_hours = 0;
    double idle_held_hours = 0;
    double allocated_unused_hours = 0;
    double unmeasured_hours = 0;
    std::int64_t cost_cents = 0; ///< its allocated time priced per card
    /// Retention removed the job's card-ticks of the window: its whole figures come from the
    /// per-job summary (and any raw card-ticks after it), not clipped to the window.
    bool from_summary = false;
};

/// Allocations: card time by allocation × state, allocated-unused by owner and unallocated use by
/// identity. Present only when the window has an allocation (or an allocation source failed).
struct AllocationSection {
    /// False for fleet reports: the counters carry allocated-unused time, not the matrix.
    bool matrix_known = true;
    double allocated_active_hours = 0;
    double allocated_idle_held_hours = 0;
    double allocated_unused_hours = 0;
    double unallocated_active_hours = 0;
    double unallocated_idle_held_hours = 0;
    double truly_idle_hours = 0;            ///< unallocated and unused
    double unknown_hours = 0;               ///< allocation unknown (a configured source failed)
    double unknown_use_hours = 0;           ///< active + idle-held of it, allocated or not: unknown
    std::size_t allocations = 0;            ///< allocations that owned a card in the window
    std::vector<AllocationOwnerRow> owners; ///< most allocated-unused first
    std::vector<UnallocatedUseRow> unallocated_use; ///< most hours first
};

/// §7: what the window cost, by state, card and identity, and the waste run-rate.
struct CostSection {
    std::string currency = "USD";
    bool prices_configured = false; ///< false: built-in example prices
    bool price_overridden = false;  ///< --price set every card's price
    double spot_discount = 0;
    std::vector<GpuCostRow> gpus;            ///< same cards and order as ReportModel::gpus
    audit::StateCost total;                  ///< sum of the rows (so rows add up exactly)
    std::vector<IdentityCostRow> identities; ///< same names and order as ReportModel::identities
    audit::RunRate idle_held_rate;           ///< at the window's per-card rates
    audit::RunRate truly_idle_rate;
    audit::RunRate allocated_unused_rate; ///< 0 without an allocation source
    /// idle_held_rate + truly_idle_rate + allocated_unused_rate (monthly/yearly exact)
    audit::RunRate waste_rate;
};

/// §9: the energy of a card, of the window or of an identity. Unknown figures are nullopt ("n/a").
struct EnergyFigures {
    std::optional<double> kwh; ///< nullopt: no energy or power reading in the card time
    /// Active, idle-held, truly idle, unmeasured and allocated-unused parts of kwh (valid when
    /// kwh is known; audit::EnergyState order).
    std::array<double, audit::k_energy_state_count> state_kwh{};
    double counter_hours = 0; ///< card-hours whose energy the driver's energy counter gave
    double power_hours = 0;   ///< card-hours whose energy is power × time (no counter)
    double card_hours = 0;    ///< all recorded card-hours (known or not)
};

/// §9: a card's clocks while active. Shares are of the active time whose reasons were read.
struct ThrottleFigures {
    double active_hours = 0; ///< active card-hours
    double events_hours = 0; ///< of them, with clocks-event reasons read
    /// Share per reason (audit::ThrottleReason order); nullopt: not read ("n/a").
    std::array<std::optional<double>, 6> reason_share{};
    std::optional<double> clock_ratio;   ///< effective / highest SM clock over active time
    std::optional<double> thermal_share; ///< the larger thermal share (the finding's)
    std::optional<double> power_share;   ///< the larger of power cap and power brake
    /// Active card-hours × (1 − clock_ratio): the time the work would have saved at full clock.
    std::optional<double> clock_lost_hours;
};

/// §9: a card's memory: time near full and memory no live process accounts for.
struct MemoryFigures {
    double known_hours = 0;                ///< card-hours with memory used and total read
    double pressure_hours = 0;             ///< of them, at or above 90 % of the total
    std::optional<double> pressure_share;  ///< pressure_hours / known_hours; nullopt: n/a
    double ghost_known_hours = 0;          ///< card-hours with ghost memory read
    std::optional<double> ghost_gib_hours; ///< nullopt: ghost memory never read (n/a)
    std::optional<TimeUs> ghost_first;     ///< start of the first card-tick with ghost memory
    std::optional<TimeUs> ghost_last_end;  ///< end of the last one
};

/// §9: "busy but light": active time during which the card drew little power for its limit.
struct LightFigures {
    /// What judged it: "gpm" (SM active < 20 %), "power" (power over its limit), "gpm+power"
    /// (the all-cards row when cards differ); empty: n/a.
    std::string by;
    double known_hours = 0;                 ///< active card-hours with the reading it is judged by
    double light_hours = 0;                 ///< of them, below the light threshold
    std::optional<double> share;            ///< light_hours / known_hours; nullopt: n/a
    std::optional<std::int64_t> cost_cents; ///< light time at the card's GPU-hour price
};

/// §9: what GPM measured on a card while active (Hopper and newer).
struct GpmFigures {
    double active_hours = 0; ///< active card-hours
    /// Per metric (audit::GpmMetric order): the active card-hours that read it…
    std::array<double, 7> known_hours{};
    /// …and its mean over them as a share (0–1); nullopt: never read ("n/a").
    std::array<std::optional<double>, 7> mean{};
};

/// §9: one card's health figures.
struct GpuHealthRow {
    int index = 0;
    std::string short_uuid;
    std::string model;
    EnergyFigures energy;
    ThrottleFigures throttle;
    MemoryFigures memory;
    LightFigures light;
    GpmFigures gpm;
    audit::FabricTotals fabric; ///< NVLink, PCIe and row remapping (0 known time: "n/a")
};

/// §9: a finding on one card (docs/health.md): `id` is "thermal-throttling", "power-capping",
/// "memory-pressure", "ghost-memory", "busy-but-light", "imbalance", "tensor-idle",
/// "dram-bound", "nvlink-errors", "nvlink-down", "pcie-degraded", "pcie-replays" or
/// "row-remap-failure".
using HealthFinding = audit::HealthFinding;

/// §9: the energy of one identity's attributed (active + idle-held) time.
struct IdentityEnergyRow {
    std::string name;
    std::optional<double> kwh; ///< nullopt: none of its time had an energy reading
    double gpu_hours = 0;      ///< its attributed card-hours
    double known_hours = 0;    ///< of them, card-hours with an energy reading
    LightFigures light;        ///< its attributed active time that was light (cost not set)
};

/// §8: what to do about §9's findings of one kind, with their evidence and what it is worth. The
/// worth is in clock, power and memory terms: outside §8's waste baseline and combined savings.
struct HealthRemedy {
    std::string id;                            ///< the findings' id, e.g. "thermal-throttling"
    std::string title;                         ///< one line, imperative
    std::string remedy;                        ///< the remediation, in the tools' own terms
    std::vector<std::string> evidence;         ///< the findings' details, one per card or identity
    std::vector<int> gpus;                     ///< driver indices of the cards concerned
    std::optional<double> addressed_gpu_hours; ///< card-hours concerned; nullopt: none
    std::optional<std::int64_t> addressed_cents; ///< their cost; nullopt: not priced
    std::optional<double> at_most_gpu_hours;     ///< upper bound of what a fix wins back
    std::optional<std::int64_t> at_most_cents;   ///< its cost
    std::string basis;                           ///< how the worth is figured, one sentence
};

/// §9: what the health readings say: energy per card, state and identity, priced.
struct HealthSection {
    std::vector<GpuHealthRow> gpus;            ///< same cards and order as ReportModel::gpus
    EnergyFigures energy;                      ///< all cards together
    ThrottleFigures throttle;                  ///< all cards together
    std::vector<HealthFinding> findings;       ///< by card, then id
    std::vector<HealthRemedy> remedies;        ///< §8: one per finding id, most cents first
    std::vector<IdentityEnergyRow> identities; ///< same names and order as ReportModel::identities
    std::string currency = "USD";
    std::optional<std::int64_t> micros_per_kwh; ///< [energy] price_per_kwh
    std::optional<double> grams_co2_per_kwh;    ///< [energy] grams_co2_per_kwh
    std::optional<std::int64_t> cost_cents;     ///< energy × price (when both known)
    std::optional<std::int64_t> idle_held_cost_cents;
    int light_power_pct = 30;     ///< the busy-but-light threshold ([health])
    LightFigures light;           ///< all cards together (cost: the sum of the cards')
    std::optional<double> co2_kg; ///< energy × carbon intensity (when both known)
    std::optional<double> idle_held_co2_kg;
};

/// A finished report.
struct ReportModel {
    int schema_version = 2; ///< 2: shares of all recorded time, with unmeasured
    std::string gua_version;
    std::string host;
    std::string driver_version;
    bool demo_data = false; ///< a run in the window is `gua demo`'s synthetic data
    TimeUs window_from = 0;
    TimeUs window_to = 0;
    std::string window_label; ///< e.g. "7d" or "2026-05-01T00:00:00Z → 2026-05-08T00:00:00Z"
    std::string time_zone;    ///< heatmap zone name, e.g. "UTC"
    std::vector<std::string> filters; ///< e.g. "gpu=0", "user=alice"
    std::vector<std::string> notes;   ///< warnings shown with the report (e.g. --interval)
    double active_threshold_pct = 10;
    std::int64_t held_threshold_mib = 100;

    std::uint64_t samples = 0; ///< card-ticks in the window
    StateShares headline;
    ProvenanceShares provenance; ///< how the headline's card time was measured
    audit::Waste waste;
    double observed_card_hours = 0;
    std::vector<GpuRow> gpus;
    std::vector<HostRow> hosts;          ///< fleet reports: per-host summary; empty for one host
    std::vector<IdentityRow> identities; ///< sorted by gpu_hours descending, then name
    /// Allocations (matrix, owners, use outside the scheduler); nullopt when none was recorded.
    std::optional<AllocationSection> allocation;
    std::size_t identities_total = 0; ///< before truncation to the top N
    /// §4 by job (`--group-by job`): most allocated GPU-hours first, the top N; nullopt
    /// otherwise.
    std::optional<std::vector<JobGroupRow>> jobs;
    std::size_t jobs_total = 0; ///< before truncation to the top N
    std::array<std::array<HeatCell, 24>, 7> heatmap{};
    Timeline timeline;               ///< per-card state over time (HTML report)
    std::array<double, 4> buckets{}; ///< efficiency bucket shares over the window
    double bucket_hours = 0;         ///< measured card-hours behind the bucket shares
    Coverage coverage;
    CostSection cost;     ///< §7
    audit::Advice advice; ///< §8
    /// Why §8 was not computed (a fleet whose daemons do not export its evidence); empty when
    /// it was.
    std::string advice_unavailable;
    /// What §8 could not take as a database report does (fleet reports), one sentence each.
    std::vector<std::string> advice_notes;
    /// The zone whose office hours split §8's waste pools; empty: time_zone (the heatmap's).
    std::string pools_time_zone;
    std::optional<PolicySummary> policy; ///< Policy: only when the window has decisions
    std::optional<HealthSection> health; ///< §9; nullopt for sources without health readings
    std::optional<PlanLink> plan_link;   ///< `--plan`: §8's culling and sharing replayed
};

} // namespace gua::report
