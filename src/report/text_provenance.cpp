// SPDX-License-Identifier: Apache-2.0
// Text for how the report's card time was measured: the source line of §1, the verdict's
// uncertainty and the provenance part of Data coverage.
#include "audit/waste.hpp"
#include "core/duration.hpp"
#include "report/text_sections.hpp"

#include <fmt/format.h>

#include <cmath>
#include <vector>

namespace gua::report {

namespace {

/// GPU-hours with enough decimals to be non-zero on short windows.
std::string hours_text(double h) {
    if (h >= 1000) {
        return fmt::format("{:.0f}", h);
    }
    if (h >= 0.1 || h == 0) {
        return fmt::format("{:.2f}", h);
    }
    return fmt::format("{:.4f}", h);
}

} // namespace

std::string source_summary(const ProvenanceShares& p) {
    const std::vector<double> shares{p.samples + p.partial, p.snapshot, p.dcgm_profiling,
                                     p.source_unknown, p.unmeasured};
    const std::vector<double> pct = audit::rounded_percentages(shares, 1);
    static constexpr std::array<const char*, 5> k_names{"from driver sample buffers", "snapshots",
                                                        "DCGM profiling", "source not recorded",
                                                        "unmeasured"};
    std::string out;
    for (std::size_t i = 0; i < shares.size(); ++i) {
        if (shares[i] <= 0) {
            continue;
        }
        out += fmt::format("{}{:.1f}% {}", out.empty() ? "" : ", ", pct[i], k_names[i]);
        if (i == 0 && p.partial > 0) {
            out += fmt::format(" ({:.1f}% in ticks that lost samples)", p.partial * 100.0);
        }
    }
    return out.empty() ? "nothing recorded" : out;
}

std::string snapshot_caveat(const ProvenanceShares& p) {
    if (p.snapshot <= 0) {
        return "";
    }
    return fmt::format("snapshot shares can be off by up to ±{:.1f} pp on bursty work (one "
                       "reading per poll stands for the whole poll)",
                       std::ceil(p.snapshot_error_pp * 10.0 - 1e-6) / 10.0);
}

std::string unmeasured_reasons(const ProvenanceShares& p) {
    std::vector<std::string> parts;
    const double partial_util = p.utilization_unknown_hours - p.no_reading_hours;
    if (partial_util > 0) {
        parts.push_back(fmt::format("{} utilization unknown (ring samples lost, GPU lost or "
                                    "readings failed)",
                                    hours_text(partial_util)));
    }
    if (p.no_reading_hours > 0) {
        parts.push_back(fmt::format("{} without any utilization reading (MIG or unsupported)",
                                    hours_text(p.no_reading_hours)));
    }
    if (p.holders_unknown_hours > 0) {
        parts.push_back(fmt::format("{} idle with holders unknown (process lists unreadable)",
                                    hours_text(p.holders_unknown_hours)));
    }
    if (p.allocation_unknown_hours > 0) {
        parts.push_back(fmt::format("{} idle with the allocation unknown (allocation source "
                                    "unreadable)",
                                    hours_text(p.allocation_unknown_hours)));
    }
    if (p.reason_unknown_hours > 0) {
        parts.push_back(
            fmt::format("{} for reasons not recorded", hours_text(p.reason_unknown_hours)));
    }
    return fmt::format("{}", fmt::join(parts, "; "));
}

void render_provenance_text(std::string& out, const ReportModel& m) {
    const ProvenanceShares& p = m.provenance;
    out += fmt::format("  measured: {}\n", source_summary(p));
    if (const std::string caveat = snapshot_caveat(p); !caveat.empty()) {
        out += "    " + caveat + "\n";
    }
    if (p.source_unknown > 0) {
        out += "    how the rest was measured was not recorded (older recordings or a source "
               "without provenance)\n";
    }
    if (p.unmeasured_hours > 0) {
        out += fmt::format("  unmeasured {} GPU-hours: {}\n", hours_text(p.unmeasured_hours),
                           unmeasured_reasons(p));
    }
    if (p.overlap_hours > 0) {
        out += fmt::format(
            "  {} of card time was recorded more than once (overlapping runs for "
            "the same GPU, e.g. two daemons on one database) and is counted once\n",
            format_duration(std::llround(p.overlap_hours * static_cast<double>(k_us_per_hour))));
    }
    if (m.gpus.size() < 2 && p.overlap_hours <= 0) {
        return;
    }
    for (const GpuRow& g : m.gpus) {
        out += fmt::format("  gpu {} {}: {}", g.index, g.short_uuid, source_summary(g.provenance));
        if (g.provenance.unmeasured_hours > 0) {
            out += fmt::format(" — {}", unmeasured_reasons(g.provenance));
        }
        if (g.provenance.overlap_hours > 0) {
            out += fmt::format(" — {} recorded twice, counted once",
                               format_duration(std::llround(g.provenance.overlap_hours *
                                                            static_cast<double>(k_us_per_hour))));
        }
        out += "\n";
    }
}

std::string verdict_text(const ReportModel& m) {
    const audit::Waste& w = m.waste;
    const bool alloc = m.allocation.has_value();
    // The same rounding as the headline's rows, so the verdict quotes what §1 shows.
    const std::vector<double> pct = state_percentages(m.headline, alloc);
    const double held = pct[1];
    const double unmeasured = pct[3];
    const double snapshot = m.provenance.snapshot * 100.0;
    std::string doubt;
    if (unmeasured > 0 && snapshot > 0) {
        doubt = fmt::format("{:.1f}% unmeasured and {:.1f}% measured by snapshots", unmeasured,
                            snapshot);
    } else if (unmeasured > 0) {
        doubt = fmt::format("{:.1f}% unmeasured", unmeasured);
    } else if (snapshot > 0) {
        doubt = fmt::format("{:.1f}% measured by snapshots", snapshot);
    }
    // Blocked time: idle-held, plus allocated-unused where an allocation source reported it.
    const std::string subject =
        alloc
            ? fmt::format("Blocked time (idle-held {:.1f}% + allocated-unused {:.1f}%) is {:.1f}%",
                          held, pct[4], held + pct[4])
            : fmt::format("Idle-held is {:.1f}%", held);
    if (!w.verdict_certain) {
        return fmt::format(
            "  {} of recorded GPU time with {}: it could be {} the 20% rule "
            "(between {:.1f}% and {:.1f}%). Measure that time (see Data coverage) before "
            "deciding.\n",
            subject, doubt, w.policy_problem ? "within" : "above", w.blocked_share_low * 100.0,
            w.blocked_share_high * 100.0);
    }
    const std::string bound =
        doubt.empty()
            ? ""
            : fmt::format(" ({} {:.1f}% with {})", w.policy_problem ? "at least" : "at most",
                          (w.policy_problem ? w.blocked_share_low : w.blocked_share_high) * 100.0,
                          doubt);
    if (w.policy_problem) {
        return fmt::format("  {} of observed GPU time{}, above the 20% rule: this is an "
                           "allocation-policy problem, not a hardware shortage. {} before "
                           "buying more GPUs.\n",
                           subject, bound,
                           alloc ? "Reclaim idle sessions and unused allocations"
                                 : "Reclaim idle sessions");
    }
    return fmt::format("  {} of observed GPU time{}, within the 20% rule: "
                       "allocation policy is not the bottleneck.\n",
                       subject, bound);
}

} // namespace gua::report
