// SPDX-License-Identifier: Apache-2.0
// Share arithmetic for the report model.
#include "report/shares.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gua::report {

StateShares shares_of(const audit::StateTimes& t) {
    StateShares s;
    const auto total = static_cast<double>(t.total());
    if (total > 0) {
        s.active = static_cast<double>(t.active) / total;
        s.idle_held = static_cast<double>(t.idle_held) / total;
        s.truly_idle = static_cast<double>(t.truly_idle) / total;
        s.unmeasured = static_cast<double>(t.unmeasured) / total;
        s.allocated_unused = static_cast<double>(t.allocated_unused) / total;
        s.lost_to_faults = static_cast<double>(t.lost_to_faults) / total;
    }
    s.active_hours = to_hours(t.active);
    s.idle_held_hours = to_hours(t.idle_held);
    s.truly_idle_hours = to_hours(t.truly_idle);
    s.unmeasured_hours = to_hours(t.unmeasured);
    s.allocated_unused_hours = to_hours(t.allocated_unused);
    s.lost_to_faults_hours = to_hours(t.lost_to_faults);
    return s;
}

ProvenanceShares provenance_of(const audit::StateTimes& states, const audit::Provenance& p,
                               DurationUs overlap_us) {
    using telemetry::UtilSource;
    const auto source = [&p](UtilSource s) { return p.by_source_us[static_cast<std::size_t>(s)]; };
    const DurationUs total = states.total();
    const DurationUs unmeasured = states.unmeasured;
    const DurationUs measured = total - unmeasured;
    // Clamped so that the parts never exceed what the classification says was measured.
    DurationUs left = measured;
    const auto take = [&left](DurationUs us) {
        const DurationUs got = std::clamp<DurationUs>(us, 0, left);
        left -= got;
        return got;
    };
    const DurationUs samples = take(source(UtilSource::samples));
    const DurationUs partial = take(source(UtilSource::partial));
    const DurationUs snapshot = take(source(UtilSource::snapshot));
    const DurationUs source_unknown = left;
    DurationUs unexplained = unmeasured;
    const auto explain = [&unexplained](DurationUs us) {
        const DurationUs got = std::clamp<DurationUs>(us, 0, unexplained);
        unexplained -= got;
        return got;
    };
    const DurationUs util_unknown = explain(p.util_unknown_us);
    const DurationUs holders_unknown = explain(p.holders_unknown_us);
    const DurationUs allocation_unknown = explain(p.allocation_unknown_us);

    ProvenanceShares s;
    const auto share = [total](DurationUs us) {
        return total > 0 ? static_cast<double>(us) / static_cast<double>(total) : 0.0;
    };
    s.card_hours = to_hours(total);
    s.samples = share(samples);
    s.partial = share(partial);
    s.snapshot = share(snapshot);
    s.source_unknown = share(source_unknown);
    s.unmeasured = share(unmeasured);
    s.samples_hours = to_hours(samples);
    s.partial_hours = to_hours(partial);
    s.snapshot_hours = to_hours(snapshot);
    s.source_unknown_hours = to_hours(source_unknown);
    s.unmeasured_hours = to_hours(unmeasured);
    s.utilization_unknown_hours = to_hours(util_unknown);
    s.no_reading_hours = to_hours(std::min(p.no_reading_us, util_unknown));
    s.holders_unknown_hours = to_hours(holders_unknown);
    s.allocation_unknown_hours = to_hours(allocation_unknown);
    s.reason_unknown_hours = to_hours(unexplained);
    s.snapshot_error_pp = s.snapshot * 100.0;
    s.overlap_hours = to_hours(overlap_us);
    return s;
}

void add_provenance_notes(const ProvenanceShares& p, std::vector<std::string>& notes) {
    if (p.snapshot > 0) {
        notes.push_back(fmt::format(
            "{:.1f}% of the card time was measured by one utilization snapshot per poll (no "
            "driver sample buffer): its shares can be off by up to ±{:.1f} pp on bursty work",
            p.snapshot * 100.0, std::ceil(p.snapshot_error_pp * 10.0 - 1e-6) / 10.0));
    }
    if (p.overlap_hours > 0) {
        notes.push_back(fmt::format(
            "{:.1f} s of card time were recorded more than once (overlapping runs for the same "
            "GPU, e.g. two daemons writing one database) and are counted once",
            p.overlap_hours * 3600.0));
    }
}

void add_sample_period_note(const ProvenanceShares& p, const std::array<double, 4>& buckets,
                            bool demo_data, std::vector<std::string>& notes) {
    const double partly_busy = buckets[1];
    const double active = buckets[1] + buckets[2] + buckets[3];
    // Periods busy 10–70 % are the trace of work shorter than the period; a tenth of the measured
    // time and a quarter of the active time is when the rounding matters.
    if (demo_data || p.samples + p.partial <= 0 || partly_busy < 0.10 ||
        partly_busy < 0.25 * active) {
        return;
    }
    notes.push_back(fmt::format(
        "{:.1f}% of the measured card time lay in driver sample periods busy only 10-70% of the "
        "time: work in bursts shorter than the driver's sample period (1/6 s to 1 s) counts as "
        "active for the whole period, so active time is rounded up (docs/measurement.md)",
        partly_busy * 100.0));
}

std::array<double, 4> bucket_shares(const std::array<DurationUs, 4>& b) {
    std::array<double, 4> out{};
    const double total = static_cast<double>(b[0] + b[1] + b[2] + b[3]);
    for (std::size_t i = 0; i < 4 && total > 0; ++i) {
        out[i] = static_cast<double>(b[i]) / total;
    }
    return out;
}

HeatCell heat_cell(const audit::StateTimes& t) {
    const StateShares s = shares_of(t);
    return HeatCell{t.total() > 0,       s.active,          s.idle_held, s.truly_idle,
                    to_hours(t.total()), s.allocated_unused};
}

std::string short_uuid(const std::string& uuid) {
    const std::size_t dash = uuid.find('-');
    if (dash == std::string::npos) {
        return uuid.substr(0, 12);
    }
    return uuid.substr(0, std::min(uuid.size(), dash + 9));
}

} // namespace gua::report
