// SPDX-License-Identifier: Apache-2.0
// Rules on active time: data-loader starvation, steady underutilization (free or full memory) and
// compute-bound cards.
#include "audit/rules.hpp"

#include <fmt/format.h>

namespace gua::audit::rules {

namespace {

/// Time of the card's active card-ticks (steady + bursty), µs.
double active_tick_us(const CardEvidence& card) {
    return static_cast<double>(card.profile.steady_us + card.profile.bursty_us);
}

/// True when the card did enough work for its active pattern to mean something.
bool has_work(const CardEvidence& card) {
    const double measured = measured_us(card);
    return measured > 0 && active_tick_us(card) / measured >= k_min_active_share;
}

/// Mean held memory while steady below 70 % as a share of the card; nullopt when unknown.
std::optional<double> steady_under_memory_share(const CardEvidence& card) {
    if (!card.memory_total_mib || *card.memory_total_mib <= 0 ||
        card.profile.steady_under_us <= 0) {
        return std::nullopt;
    }
    return card.profile.steady_under_held_mib_us /
           static_cast<double>(card.profile.steady_under_us) /
           static_cast<double>(*card.memory_total_mib);
}

/// Steady-underutilized cards, split by whether their memory is nearly full.
std::vector<std::size_t> steady_under_cards(const Context& ctx, bool memory_full) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < ctx.input.cards.size(); ++i) {
        const CardEvidence& card = ctx.input.cards[i];
        if (!has_work(card) ||
            static_cast<double>(card.profile.steady_under_us) / active_tick_us(card) <
                k_pattern_share) {
            continue;
        }
        const std::optional<double> mem = steady_under_memory_share(card);
        const bool full = mem && *mem >= k_memory_full_share;
        if (full == memory_full) {
            out.push_back(i);
        }
    }
    return out;
}

std::string memory_text(const CardEvidence& card) {
    const std::optional<double> share = steady_under_memory_share(card);
    if (!share) {
        return "memory use unknown";
    }
    const double mib = *share * static_cast<double>(*card.memory_total_mib);
    return fmt::format("holding {} of {} ({})", format_gib(mib),
                       format_gib(static_cast<double>(*card.memory_total_mib)), pct_text(*share));
}

std::optional<Recommendation> underutilized(const Context& ctx, bool memory_full) {
    const std::vector<std::size_t> cards = steady_under_cards(ctx, memory_full);
    if (cards.empty()) {
        return std::nullopt;
    }
    Recommendation r;
    for (const std::size_t i : cards) {
        const CardEvidence& card = ctx.input.cards[i];
        const CardProfile& p = card.profile;
        r.gpus.push_back(card.index);
        r.claims.push_back(Claim{i, Pool::headroom_under,
                                 memory_full ? k_memory_full_recovery : k_batch_recovery});
        r.evidence.push_back(fmt::format(
            "{}: {} of its active time steady at a mean {:.1f} % SM (underutilized, 10–70 %), {}",
            card_text(card),
            pct_text(static_cast<double>(p.steady_under_us) / active_tick_us(card)),
            p.steady_under_util_us / static_cast<double>(p.steady_under_us), memory_text(card)));
    }
    const auto users = top_identities(ctx, cards, false, 3, r.identities);
    if (!users.empty()) {
        r.evidence.push_back(fmt::format("run by {}", fmt::join(users, ", ")));
    }
    return r;
}

} // namespace

std::optional<Recommendation> data_loader(const Context& ctx) {
    Recommendation r;
    std::vector<std::size_t> cards;
    for (std::size_t i = 0; i < ctx.input.cards.size(); ++i) {
        const CardEvidence& card = ctx.input.cards[i];
        const CardProfile& p = card.profile;
        if (!has_work(card) ||
            static_cast<double>(p.bursty_us) / active_tick_us(card) < k_pattern_share) {
            continue;
        }
        const double mean = p.bursty_util_us / static_cast<double>(p.bursty_us);
        if (mean >= k_dataloader_max_util_pct) {
            continue;
        }
        DurationUs bucket_total = 0;
        for (const DurationUs b : p.bursty_bucket_us) {
            bucket_total += b;
        }
        const auto share = [&](Bucket b) {
            return bucket_total > 0
                       ? static_cast<double>(p.bursty_bucket_us[static_cast<std::size_t>(b)]) /
                             static_cast<double>(bucket_total)
                       : 0.0;
        };
        cards.push_back(i);
        r.gpus.push_back(card.index);
        r.claims.push_back(Claim{i, Pool::stall, k_dataloader_recovery});
        r.evidence.push_back(fmt::format(
            "{}: {} of its active card-ticks bursty — {} of that time below 10 % SM and {} at "
            "90 % or more (mean {:.1f} %); {} GPU-hours stalled",
            card_text(card), pct_text(static_cast<double>(p.bursty_us) / active_tick_us(card)),
            pct_text(share(Bucket::idle)), pct_text(share(Bucket::compute_bound)), mean,
            format_hours(card.pools[static_cast<std::size_t>(Pool::stall)] /
                         static_cast<double>(k_us_per_hour))));
        if (card.states.idle_held > 0) {
            r.evidence.push_back(fmt::format(
                "GPU {}'s idle-held time ({} of it) is this stall, not an abandoned session: "
                "culling would not help",
                card.index,
                pct_text(static_cast<double>(card.states.idle_held) / measured_us(card))));
        }
    }
    if (cards.empty()) {
        return std::nullopt;
    }
    r.id = "data-loader";
    r.group = "stall";
    r.title =
        "Feed the GPU: bursts of 100 % between stretches of 0 % mean a starved input pipeline";
    r.remedy =
        "Overlap loading with compute: `DataLoader(num_workers=N, pin_memory=True, "
        "persistent_workers=True, prefetch_factor=…)` with `.to(device, non_blocking=True)`, "
        "pre-decoded or sharded datasets, or decoding and augmentation on the GPU with "
        "NVIDIA DALI.";
    const auto users = top_identities(ctx, cards, false, 3, r.identities);
    if (!users.empty()) {
        r.evidence.push_back(fmt::format("run by {}", fmt::join(users, ", ")));
    }
    return r;
}

std::optional<Recommendation> larger_batches(const Context& ctx) {
    std::optional<Recommendation> r = underutilized(ctx, false);
    if (r) {
        r->id = "larger-batches";
        r->group = "batch";
        r->title = "Give each step more work: larger batches, mixed precision, or a smaller GPU";
        r->remedy = "Raise the batch size into the free memory (scaling the learning rate), use "
                    "mixed precision (AMP autocast, BF16) to fit larger batches, or move the job "
                    "to a smaller GPU SKU or a MIG slice it can fill.";
    }
    return r;
}

std::optional<Recommendation> memory_bound(const Context& ctx) {
    std::optional<Recommendation> r = underutilized(ctx, true);
    if (r) {
        r->id = "memory-bound";
        r->group = "memory";
        r->title = "Memory is nearly full at low utilization: trade compute for memory";
        r->remedy = "Free activation memory to raise the batch: gradient checkpointing "
                    "(`torch.utils.checkpoint`, `model.gradient_checkpointing_enable()`), "
                    "gradient accumulation for a larger effective batch, BF16 activations, or "
                    "sharded optimizer state (ZeRO, FSDP).";
    }
    return r;
}

std::optional<Recommendation> compute_bound(const Context& ctx) {
    Recommendation r;
    std::vector<std::size_t> cards;
    for (std::size_t i = 0; i < ctx.input.cards.size(); ++i) {
        const CardEvidence& card = ctx.input.cards[i];
        const CardProfile& p = card.profile;
        if (!has_work(card) ||
            static_cast<double>(p.steady_compute_bound_us) / active_tick_us(card) <
                k_pattern_share) {
            continue;
        }
        cards.push_back(i);
        r.gpus.push_back(card.index);
        r.claims.push_back(Claim{i, Pool::compute_bound, k_compute_bound_recovery});
        r.evidence.push_back(fmt::format(
            "{}: {} of its active time steady at 90 % SM or more (mean {:.1f} %), {} GPU-hours "
            "compute-bound",
            card_text(card),
            pct_text(static_cast<double>(p.steady_compute_bound_us) / active_tick_us(card)),
            p.steady_compute_bound_util_us / static_cast<double>(p.steady_compute_bound_us),
            format_hours(to_hours(p.steady_compute_bound_us))));
    }
    if (cards.empty()) {
        return std::nullopt;
    }
    r.id = "compute-bound";
    r.group = "math";
    r.title = "Compute-bound: make each step cheaper with faster math";
    r.remedy = "Move the math onto Tensor Cores: AMP autocast with BF16 (or FP16 with GradScaler), "
               "TF32 matmuls (`torch.backends.cuda.matmul.allow_tf32 = True`), FP8 on H100 "
               "(Transformer Engine), and fused kernels (fused optimizers, FlashAttention / SDPA, "
               "`torch.compile`).";
    const auto users = top_identities(ctx, cards, false, 3, r.identities);
    if (!users.empty()) {
        r.evidence.push_back(fmt::format("run by {}", fmt::join(users, ", ")));
    }
    return r;
}

} // namespace gua::audit::rules
