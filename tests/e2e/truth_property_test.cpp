// SPDX-License-Identifier: Apache-2.0
// Property (in process, through the store's writer and the report path): for random recorded
// histories with faults — cards lost for whole ticks, unmeasured spans, ticks without
// utilization, failed process lists, gaps, crashed runs and two runs recording one GPU at the
// same time — no GPU's reported time exceeds the wall time it was recorded over, the three
// shares plus unmeasured account for all of it, and identities add up to the card-hours.
#include "core/timezone.hpp"
#include "e2e/truth_report.hpp"
#include "report/build.hpp"
#include "report/render.hpp"
#include "store/database.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>

namespace gua {
namespace truth_property_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1777593600LL * k_us_per_second;

struct Interval {
    TimeUs from = 0;
    TimeUs to = 0;
};

/// Length of the union of `spans` (µs).
DurationUs union_length(std::vector<Interval> spans) {
    std::sort(spans.begin(), spans.end(),
              [](const Interval& a, const Interval& b) { return a.from < b.from; });
    DurationUs total = 0;
    TimeUs end = std::numeric_limits<TimeUs>::min();
    for (const Interval& s : spans) {
        const TimeUs from = std::max(s.from, end);
        if (s.to > from) {
            total += s.to - from;
        }
        end = std::max(end, s.to);
    }
    return total;
}

std::string uuid_of(int card) {
    return "GPU-5eed000" + std::to_string(card) + "-0000-0000-0000-000000000000";
}

/// One random card-tick of `duration`: consistent fields (buckets and active cover the measured
/// part, the idle parts fit in the rest, processes' active time in the card's).
telemetry::CardTickRecord random_card(std::mt19937_64& rng, int card, DurationUs duration) {
    const auto pick = [&](std::int64_t n) {
        return n <= 0 ? 0 : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n + 1));
    };
    telemetry::CardTickRecord r;
    r.device.uuid = uuid_of(card);
    r.device.index = card;
    r.device.name = "NVIDIA H100 80GB HBM3";
    r.device.memory_total_mib = 81559;
    const std::int64_t kind = pick(9);
    if (kind == 0) {
        r.util_source = telemetry::UtilSource::none; // no utilization: unmeasured whole
    } else {
        r.util_source = kind < 3   ? telemetry::UtilSource::snapshot
                        : kind < 6 ? telemetry::UtilSource::samples
                                   : telemetry::UtilSource::partial;
        r.unmeasured_us =
            r.util_source == telemetry::UtilSource::partial || pick(4) == 0 ? pick(duration) : 0;
        const DurationUs measured = duration - r.unmeasured_us;
        const DurationUs active = pick(measured);
        r.active_us = active;
        r.bucket_us[0] = measured - active;
        r.bucket_us[1] = pick(active);
        r.bucket_us[2] = pick(active - r.bucket_us[1]);
        r.bucket_us[3] = active - r.bucket_us[1] - r.bucket_us[2];
        r.util_pct = measured > 0
                         ? 100.0 * static_cast<double>(active) / static_cast<double>(measured)
                         : 0.0;
        const DurationUs idle = measured - active;
        r.idle_unknown_us = pick(3) == 0 ? pick(idle) : 0;
        r.idle_unlisted_us = pick(idle - r.idle_unknown_us);
        r.util_samples = 1;
    }
    const int procs = static_cast<int>(pick(2));
    DurationUs left = r.active_us.value_or(0);
    std::int64_t held = 0;
    for (int p = 0; p < procs; ++p) {
        telemetry::ProcessTick pt;
        pt.pid = static_cast<std::uint32_t>(1000 + pick(5));
        pt.start_ticks = pt.pid * 3ULL;
        pt.identity.user = "user" + std::to_string(pick(3));
        pt.identity.uid = 2000 + static_cast<std::uint32_t>(pick(3));
        pt.mem_used_mib =
            std::vector<std::int64_t>{0, 50, 4000, 8000}[static_cast<std::size_t>(pick(3))];
        if (pick(1) == 0) {
            pt.sm_util_pct = static_cast<double>(pick(100));
            pt.active_us = pick(left);
            left -= *pt.active_us;
        }
        held += *pt.mem_used_mib;
        r.processes.push_back(pt);
    }
    r.readings.mem_used_mib = held;
    return r;
}

struct Recorded {
    std::map<std::string, std::vector<Interval>> spans;                    // per uuid, all runs
    std::map<std::string, std::map<int, std::vector<Interval>>> run_spans; // per uuid and run
    std::map<std::string, DurationUs> unmeasured_us; // written unmeasured time per uuid
    TimeUs first = std::numeric_limits<TimeUs>::max();
    TimeUs last_end = 0;
};

/// Records 1–3 runs (sometimes overlapping in time, sometimes ending without finish()).
Recorded record_random(store::Database& db, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const auto pick = [&](std::int64_t n) {
        return static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n + 1));
    };
    struct Planned {
        int run = 0;
        telemetry::Tick tick;
    };
    std::vector<Planned> plan;
    const int runs = 1 + static_cast<int>(pick(2));
    const int cards = 1 + static_cast<int>(pick(2));
    TimeUs run_start = k_start;
    for (int run = 0; run < runs; ++run) {
        const DurationUs interval =
            std::vector<DurationUs>{k_us_per_second, 5 * k_us_per_second,
                                    30 * k_us_per_second}[static_cast<std::size_t>(pick(2))];
        // A later run starts after the previous one or, as a second writer would, inside it.
        TimeUs t = run_start + (pick(1) == 0 ? 0 : pick(40) * k_us_per_second);
        const int ticks = 1 + static_cast<int>(pick(30));
        for (int n = 0; n < ticks; ++n) {
            if (pick(9) == 0) {
                t += pick(120) * k_us_per_second; // gap: the daemon was down
            }
            Planned p;
            p.run = run;
            p.tick.seq = static_cast<std::uint64_t>(n);
            p.tick.t0 = t;
            p.tick.duration_us = interval + (pick(4) == 0 ? pick(2000) - 1000 : 0);
            for (int c = 0; c < cards; ++c) {
                if (pick(7) == 0) {
                    p.tick.lost_uuids.push_back(uuid_of(c)); // lost for the whole tick
                    continue;
                }
                p.tick.cards.push_back(random_card(rng, c, p.tick.duration_us));
            }
            t += p.tick.duration_us;
            plan.push_back(std::move(p));
        }
        run_start = pick(1) == 0 ? t : k_start + pick(60) * k_us_per_second;
    }
    std::stable_sort(plan.begin(), plan.end(),
                     [](const Planned& a, const Planned& b) { return a.tick.t0 < b.tick.t0; });
    std::vector<std::unique_ptr<store::Writer>> writers;
    for (int run = 0; run < runs; ++run) {
        writers.push_back(std::make_unique<store::Writer>(
            db, store::RunInfo{"host", "560.35.05", "nvml", 30 * k_us_per_second, 10.0,
                               k_start + run, 100, false}));
    }
    Recorded rec;
    for (const Planned& p : plan) {
        writers[static_cast<std::size_t>(p.run)]->write(p.tick);
        for (const telemetry::CardTickRecord& c : p.tick.cards) {
            const Interval span{p.tick.t0, p.tick.t0 + p.tick.duration_us};
            rec.spans[c.device.uuid].push_back(span);
            rec.run_spans[c.device.uuid][p.run].push_back(span);
            rec.unmeasured_us[c.device.uuid] +=
                c.active_us ? c.unmeasured_us + c.idle_unknown_us : p.tick.duration_us;
            rec.first = std::min(rec.first, span.from);
            rec.last_end = std::max(rec.last_end, span.to);
        }
    }
    for (std::size_t run = 0; run < writers.size(); ++run) {
        if (pick(3) != 0) {
            writers[run]->finish(rec.last_end); // else: ended as after a crash
        }
    }
    return rec;
}

/// A random history recorded into a fresh database, and the report over all of it.
struct Observed {
    Recorded rec;
    e2e::ReportFigures figures;
};

Observed observe(std::uint64_t seed) {
    test::TempDir dir;
    store::Database db(dir.file("gua.db"), store::OpenMode::create);
    store::migrate(db);
    Observed o;
    o.rec = record_random(db, seed);
    report::BuildOptions options;
    options.from = o.rec.first - k_us_per_hour;
    options.to = o.rec.last_end + k_us_per_hour;
    options.window_label = "test";
    options.top_identities = 1000;
    const report::ReportModel model =
        report::build_report(db, options, TimeZone::load("UTC").value());
    o.figures = e2e::report_figures(nlohmann::json::parse(report::render_json(model)));
    return o;
}

DurationUs total_length(const std::vector<Interval>& spans) {
    DurationUs s = 0;
    for (const Interval& i : spans) {
        s += i.to - i.from;
    }
    return s;
}

RC_GTEST_PROP(TruthProperty, NoGpuIsReportedForMoreThanTheWallTimeItWasRecorded,
              (std::uint64_t seed)) {
    const Observed o = observe(seed);
    RC_PRE(!o.rec.spans.empty());
    const double wall_s = static_cast<double>(o.rec.last_end - o.rec.first) / 1e6;
    for (const auto& [uuid, spans] : o.rec.spans) {
        RC_ASSERT(o.figures.cards.contains(uuid));
        const e2e::ReportCard& card = o.figures.cards.at(uuid);
        // Overlapping runs of one GPU (two writers) count once.
        RC_ASSERT(card.total_s() <= static_cast<double>(union_length(spans)) / 1e6 + 1e-6);
        RC_ASSERT(card.total_s() <= wall_s + 1e-6);
        // Nothing a single run recorded is lost.
        for (const auto& [run, run_spans] : o.rec.run_spans.at(uuid)) {
            RC_ASSERT(card.total_s() >= static_cast<double>(union_length(run_spans)) / 1e6 - 1e-6);
        }
    }
}

RC_GTEST_PROP(TruthProperty, ThreeStatesPlusUnmeasuredAreAllTheRecordedTime, (std::uint64_t seed)) {
    const Observed o = observe(seed);
    for (const auto& [uuid, spans] : o.rec.spans) {
        if (union_length(spans) < total_length(spans)) {
            continue; // overlapping runs: the property above
        }
        RC_ASSERT(o.figures.cards.contains(uuid));
        const e2e::ReportCard& card = o.figures.cards.at(uuid);
        const double recorded_s = static_cast<double>(total_length(spans)) / 1e6;
        RC_ASSERT(std::abs(card.total_s() - recorded_s) <= 1e-6 * std::max(1.0, recorded_s));
        // Unmeasured time (no utilization, lost samples or GPU, unknown holders) stays
        // unmeasured: never active, idle-held or truly idle.
        RC_ASSERT(card.unmeasured_s >=
                  static_cast<double>(o.rec.unmeasured_us.at(uuid)) / 1e6 - 1e-6);
    }
}

RC_GTEST_PROP(TruthProperty, IdentitiesAddUpToTheCardHours, (std::uint64_t seed)) {
    const Observed o = observe(seed);
    double identities = 0;
    for (const auto& [name, s] : o.figures.identity_s) {
        identities += s;
    }
    RC_ASSERT(std::abs(identities - o.figures.headline_attributable_s) <=
              1e-6 * std::max(1.0, identities));
}

} // namespace truth_property_test
} // namespace gua
