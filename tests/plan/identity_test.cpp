// SPDX-License-Identifier: Apache-2.0
// The identity the plan must meet: with no policy, exclusive cards and the recorded placement,
// the replay reproduces the recorded number of busy cards (active or idle-held, as the audit
// classifies them) tick by tick — on demo workloads recorded through the real sampler and writer,
// and on a generated month of a 12-GPU fleet.
#include "audit/classify.hpp"
#include "core/clock.hpp"
#include "fleet_workload.hpp"
#include "identity/resolver.hpp"
#include "plan/load.hpp"
#include "plan/place.hpp"
#include "sampler/sampler.hpp"
#include "store/reader.hpp"
#include "store/temp_db.hpp"
#include "store/writer.hpp"
#include "telemetry/synthetic.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <map>

namespace gua::plan_test {
namespace identity_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1767607200LL * k_us_per_second; // 2026-01-05T10:00:00Z

/// Records `ticks` ticks of demo workload `name` into `db` through the sampler and writer.
void record_demo(store::Database& db, const std::string& name, int ticks, DurationUs interval) {
    SimulatedClock clock(k_start);
    const auto source = telemetry::make_synthetic_source(name, clock.wall_now(), interval, 1);
    ASSERT_NE(source, nullptr);
    store::Writer writer(db, store::RunInfo{"demo", source->driver_version(), "synthetic:" + name,
                                            interval, 10.0, clock.wall_now()});
    identity::Resolver resolver;
    sampler::SamplerOptions so;
    so.interval_us = interval;
    so.max_ticks = static_cast<std::uint64_t>(ticks);
    sampler::Sampler sampler(*source, clock, resolver, so);
    const std::atomic<bool> stop{false};
    sampler.run(stop, [&](const telemetry::Tick& tick) { writer.write(tick); });
    writer.finish(clock.wall_now());
}

/// Compares, at every recorded tick start, the busy cards the audit counts with the cards the
/// replay has a unit on. Returns the number of tick starts compared.
std::int64_t expect_identity(store::Database& db) {
    const audit::Thresholds th;
    std::map<TimeUs, int> busy;
    store::Reader reader(db);
    reader.scan(store::k_time_min, store::k_time_max, [&](const audit::CardTick& c) {
        const audit::StateTimes st = audit::classify(c, th);
        const bool unmeasured_but_held = !c.active_us && audit::is_held(c, th);
        busy[c.t0] += (st.active + st.idle_held > 0 || unmeasured_but_held) ? 1 : 0;
    });
    plan::LoadOptions lo;
    lo.from = store::k_time_min;
    lo.to = store::k_time_max;
    const plan::Demand demand = plan::load_demand(db, lo);
    const std::vector<plan::Step> steps = plan::recorded_placement(demand);
    std::size_t s = 0;
    int mismatches = 0;
    for (const auto& [t0, n] : busy) {
        while (s < steps.size() && steps[s].t <= t0) {
            ++s;
        }
        const int replayed = s == 0 ? 0 : steps[s - 1].count;
        if (replayed != n && ++mismatches <= 5) {
            ADD_FAILURE() << "at " << t0 << ": recorded " << n << " busy cards, replayed "
                          << replayed;
        }
    }
    EXPECT_EQ(mismatches, 0);
    return static_cast<std::int64_t>(busy.size());
}

class PlanIdentity : public ::testing::TestWithParam<const char*> {};

TEST_P(PlanIdentity, DemoWorkloadReplaysTheRecordedBusyCards) {
    testing::TempDb t;
    const std::string name = GetParam();
    int ticks = 0;
    DurationUs interval = 0;
    for (const telemetry::WorkloadInfo& w : telemetry::workloads()) {
        if (w.name == name) {
            ticks = w.default_ticks;
            interval = w.default_interval_us;
        }
    }
    record_demo(t.db, name, ticks, interval);
    EXPECT_EQ(expect_identity(t.db), ticks);
}

INSTANTIATE_TEST_SUITE_P(Workloads, PlanIdentity,
                         ::testing::Values("classic", "bursty", "overnight", "cotenants",
                                           "notebook", "offhours"));

TEST(PlanIdentityFleet, GeneratedMonthReplaysTheRecordedBusyCards) {
    testing::TempDb t;
    bench::FleetOptions o;
    o.ticks = 30 * 2880; // 30 days at 30 s, 12 GPUs, with the usual rare measurement faults
    {
        store::Writer w(
            t.db, store::RunInfo{"fleet", "1", "synthetic:fleet", o.interval_us, 10, o.start});
        bench::generate_fleet(o, [&](const telemetry::Tick& tick) { w.write(tick); });
        w.finish(o.start + o.ticks * o.interval_us);
    }
    EXPECT_EQ(expect_identity(t.db), o.ticks);
}

} // namespace identity_test
} // namespace gua::plan_test
