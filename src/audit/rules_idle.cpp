// SPDX-License-Identifier: Apache-2.0
// Rules on idle time: idle culling, sharing through MPS/MIG, and off-hours scale-down or spot.
#include "audit/rules.hpp"
#include "audit/waste.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gua::audit::rules {

namespace {

constexpr std::array<const char*, 7> k_weekdays{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};

double pool_us(const CardEvidence& card, Pool pool) {
    return card.pools[static_cast<std::size_t>(pool)];
}

double held_us(const CardEvidence& card) {
    return pool_us(card, Pool::held_office) + pool_us(card, Pool::held_off_hours);
}

/// Heatmap cells with the most time of `pick`, as "Mon 14:00", keeping the cells' order stable.
template <typename Pick>
std::vector<std::string> worst_cells(const RecommendInput& in, Pick pick, bool off_hours_only,
                                     std::size_t limit) {
    std::vector<std::pair<double, std::string>> cells;
    for (int d = 0; d < 7; ++d) {
        for (int h = 0; h < 24; ++h) {
            const StateTimes& c =
                in.heatmap[static_cast<std::size_t>(d)][static_cast<std::size_t>(h)];
            const double value = pick(c);
            if (value > 0 && (!off_hours_only || is_off_hours(d, h))) {
                cells.emplace_back(
                    value, fmt::format("{} {:02}:00", k_weekdays[static_cast<std::size_t>(d)], h));
            }
        }
    }
    std::stable_sort(cells.begin(), cells.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::string> out;
    for (std::size_t i = 0; i < cells.size() && i < limit; ++i) {
        out.push_back(cells[i].second);
    }
    return out;
}

} // namespace

std::optional<Recommendation> idle_culling(const Context& ctx) {
    double fleet_held = 0;
    double fleet_measured = 0;
    bool card_over = false;
    for (const CardEvidence& card : ctx.input.cards) {
        fleet_held += held_us(card);
        fleet_measured += measured_us(card);
        card_over = card_over || (measured_us(card) > 0 &&
                                  held_us(card) / measured_us(card) >= k_card_idle_held_share);
    }
    const double share = fleet_measured > 0 ? fleet_held / fleet_measured : 0;
    if (fleet_held <= 0 || (share <= k_idle_held_policy_share && !card_over)) {
        return std::nullopt;
    }
    Recommendation r;
    r.id = "idle-culling";
    r.group = "idle-held";
    r.title = "Reclaim idle-held GPUs with session timeouts and idle culling";
    r.remedy = "Set an idle timeout on interactive sessions: Jupyter "
               "`MappingKernelManager.cull_idle_timeout` (with `cull_interval`, and "
               "`cull_connected` for open browser tabs) or jupyterhub-idle-culler `--timeout` for "
               "whole servers; enforce it on the GPU itself with gua's idle-held policy (log → "
               "notify → terminate after a grace period), since kernel culling only sees notebook "
               "traffic, not the GPU memory a kernel keeps.";
    r.evidence.push_back(fmt::format(
        "idle-held (memory held, SMs cold, outside data-loader stalls): {} GPU-hours = {} of "
        "measured GPU time, {} the 20 % rule",
        format_hours(fleet_held / static_cast<double>(k_us_per_hour)), pct_text(share),
        share > k_idle_held_policy_share ? "above" : "within"));
    std::vector<std::size_t> cards;
    for (std::size_t i = 0; i < ctx.input.cards.size(); ++i) {
        const CardEvidence& card = ctx.input.cards[i];
        if (held_us(card) <= 0) {
            continue;
        }
        cards.push_back(i);
        r.gpus.push_back(card.index);
        r.claims.push_back(Claim{i, Pool::held_office, k_culling_recovery});
        r.claims.push_back(Claim{i, Pool::held_off_hours, k_culling_recovery});
        const double card_share = held_us(card) / measured_us(card);
        if (card_share >= k_sharing_min_held_share) {
            r.evidence.push_back(
                fmt::format("{}: idle-held {} of its time ({} GPU-hours)", card_text(card),
                            pct_text(card_share),
                            format_hours(held_us(card) / static_cast<double>(k_us_per_hour))));
        }
    }
    const auto holders = top_identities(ctx, cards, true, 3, r.identities);
    if (!holders.empty()) {
        r.evidence.push_back(fmt::format("held by {}", fmt::join(holders, ", ")));
    }
    if (ctx.input.recorded_us < k_off_hours_min_recorded_us) {
        return r; // a time-of-day pattern needs a whole day of data
    }
    r.hours = worst_cells(
        ctx.input, [](const StateTimes& c) { return static_cast<double>(c.idle_held); }, false, 3);
    if (!r.hours.empty()) {
        r.evidence.push_back(fmt::format("most idle-held hours ({}): {}", ctx.input.time_zone,
                                         fmt::join(r.hours, ", ")));
    }
    return r;
}

std::optional<Recommendation> gpu_sharing(const Context& ctx) {
    Recommendation r;
    std::vector<std::size_t> cards;
    for (std::size_t i = 0; i < ctx.input.cards.size(); ++i) {
        const CardEvidence& card = ctx.input.cards[i];
        const double held = held_us(card);
        if (held <= 0 || !card.memory_total_mib || *card.memory_total_mib <= 0 ||
            held / measured_us(card) < k_sharing_min_held_share) {
            continue;
        }
        const double total_mib = static_cast<double>(*card.memory_total_mib);
        const double footprint_mib = card.profile.idle_held_mib_us / held;
        const double footprint = footprint_mib / total_mib;
        if (footprint > k_sharing_max_footprint) {
            continue;
        }
        const int slices =
            std::max(1, static_cast<int>(std::ceil(footprint * k_mig_slices - 1e-9)));
        const double recovery =
            std::min(k_sharing_max_recovery, 1.0 - static_cast<double>(slices) / k_mig_slices);
        cards.push_back(i);
        r.gpus.push_back(card.index);
        r.claims.push_back(Claim{i, Pool::held_office, recovery});
        r.claims.push_back(Claim{i, Pool::held_off_hours, recovery});
        r.evidence.push_back(fmt::format(
            "{}: idle-held {} of its time while its holders kept {} of {} ({}) — {} of {} MIG "
            "slices would hold it",
            card_text(card), pct_text(held / measured_us(card)), format_gib(footprint_mib),
            format_gib(total_mib), pct_text(footprint), slices, k_mig_slices));
    }
    if (cards.empty()) {
        return std::nullopt;
    }
    r.id = "gpu-sharing";
    r.group = "idle-held";
    r.title = "Share cards instead of holding them whole: MPS or MIG";
    r.remedy = "Run small interactive holders side by side: NVIDIA MPS (`nvidia-cuda-mps-control "
               "-d`) lets several processes share one GPU's SMs; MIG (A100/H100/A30, `nvidia-smi "
               "mig -cgi <profile> -C`) gives each notebook an isolated slice such as 1g.10gb, so "
               "the rest of the card stays usable while it idles.";
    const auto holders = top_identities(ctx, cards, true, 3, r.identities);
    if (!holders.empty()) {
        r.evidence.push_back(fmt::format("held by {}", fmt::join(holders, ", ")));
    }
    return r;
}

namespace {

/// Card time off and in office hours, and what of it was wasted.
struct OffHoursWaste {
    double off_measured = 0;
    double office_measured = 0;
    double off_held = 0;
    double off_idle = 0;
    double office_waste = 0;
};

OffHoursWaste off_hours_waste(const RecommendInput& in) {
    OffHoursWaste w;
    for (const CardEvidence& card : in.cards) {
        w.off_measured += static_cast<double>(card.profile.off_hours_us);
        w.office_measured += static_cast<double>(card.profile.office_us);
        w.off_held += pool_us(card, Pool::held_off_hours);
        w.off_idle += pool_us(card, Pool::idle_off_hours);
        w.office_waste += pool_us(card, Pool::held_office) + pool_us(card, Pool::idle_office);
    }
    return w;
}

/// Claims the off-hours waste of every card that has some; returns those cards.
std::vector<std::size_t> claim_off_hours(const RecommendInput& in, Recommendation& r) {
    std::vector<std::size_t> cards;
    for (std::size_t i = 0; i < in.cards.size(); ++i) {
        const CardEvidence& card = in.cards[i];
        const double waste =
            pool_us(card, Pool::held_off_hours) + pool_us(card, Pool::idle_off_hours);
        if (waste <= 0) {
            continue;
        }
        cards.push_back(i);
        r.gpus.push_back(card.index);
        r.claims.push_back(Claim{i, Pool::held_off_hours, k_off_hours_recovery});
        r.claims.push_back(Claim{i, Pool::idle_off_hours, k_off_hours_recovery});
    }
    return cards;
}

} // namespace

std::optional<Recommendation> off_hours(const Context& ctx) {
    const RecommendInput& in = ctx.input;
    if (in.recorded_us < k_off_hours_min_recorded_us) {
        return std::nullopt;
    }
    const OffHoursWaste w = off_hours_waste(in);
    if (w.off_measured <= 0 || w.office_measured <= 0) {
        return std::nullopt;
    }
    const double off_share = (w.off_held + w.off_idle) / w.off_measured;
    const double office_share = w.office_waste / w.office_measured;
    if (off_share < k_off_hours_waste_share || off_share - office_share < k_off_hours_margin) {
        return std::nullopt;
    }
    Recommendation r;
    r.id = "off-hours";
    r.group = "off-hours";
    r.title = "Scale down or schedule off-hours capacity; run batch work on spot";
    r.remedy = fmt::format(
        "Stop or hibernate idle nodes at night and at weekends (cluster-autoscaler scale-down, "
        "Slurm power saving with `SuspendTime`, a scheduled shutdown), queue batch and retraining "
        "jobs into those hours instead, and run interruptible work on spot/preemptible instances "
        "({:.0f} % off on-demand).",
        in.spot_discount * 100.0);
    const double h = static_cast<double>(k_us_per_hour);
    r.evidence.push_back(fmt::format(
        "{} hours of data; off-hours (weekdays before {:02}:00 and from {:02}:00, weekends; {}): "
        "{} of {} card-hours wasted (idle-held {} h, truly idle {} h) against {} in office hours",
        format_hours(static_cast<double>(in.recorded_us) / h), k_office_first_hour,
        k_office_end_hour, in.time_zone, pct_text(off_share), format_hours(w.off_measured / h),
        format_hours(w.off_held / h), format_hours(w.off_idle / h), pct_text(office_share)));
    const std::vector<std::size_t> cards = claim_off_hours(in, r);
    r.hours = worst_cells(
        in,
        [](const StateTimes& c) {
            const auto measured = static_cast<double>(c.active + c.idle_held + c.truly_idle);
            return measured > 0 ? static_cast<double>(c.idle_held + c.truly_idle) / measured : 0.0;
        },
        true, 5);
    if (!r.hours.empty()) {
        r.evidence.push_back(
            fmt::format("most wasted off-hours cells: {}", fmt::join(r.hours, ", ")));
    }
    const auto holders = top_identities(ctx, cards, true, 3, r.identities);
    if (!holders.empty()) {
        r.evidence.push_back(
            fmt::format("idle-held on these cards by {}", fmt::join(holders, ", ")));
    }
    double off_value = 0;
    for (const Claim& c : r.claims) {
        off_value += ctx.values[c.card][static_cast<std::size_t>(c.pool)];
    }
    // Spot prices the off-hours capacity that scale-down keeps (for night jobs), as a share of
    // the baseline: a price cut, composed multiplicatively with the utilization fixes.
    if (ctx.baseline > 0) {
        r.rate_reduction = std::clamp(in.spot_discount, 0.0, 1.0) * (1.0 - k_off_hours_recovery) *
                           off_value / ctx.baseline;
    }
    return r;
}

} // namespace gua::audit::rules
