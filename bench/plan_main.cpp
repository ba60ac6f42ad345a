// SPDX-License-Identifier: Apache-2.0
// gua-plan-bench: the cost of `gua plan` on a database (e.g. one written by gua-fleetgen): reading
// the demand, then the full sweep (7 timeouts × 3 sharing modes, each with its capacity search).
// Usage: gua-plan-bench DB [FROM TO] (ISO 8601); prints wall and CPU seconds of each part, the peak
// RSS, each scenario's figures and the recorded busy cards' peak and p95 (the back-test's truth).
#include "core/time.hpp"
#include "plan/load.hpp"
#include "plan/place.hpp"
#include "plan/render.hpp"
#include "plan/sweep.hpp"
#include "store/database.hpp"
#include "store/reader.hpp"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <sys/resource.h>

namespace {

double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double wall_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2 && argc != 4) {
        fmt::print(stderr, "usage: gua-plan-bench DB [FROM TO]\n");
        return 2;
    }
    gua::store::Database db(argv[1], gua::store::OpenMode::read_only);
    gua::plan::LoadOptions lo;
    lo.from = gua::store::k_time_min;
    lo.to = gua::store::k_time_max;
    if (argc == 4) {
        const auto from = gua::parse_iso8601(argv[2]);
        const auto to = gua::parse_iso8601(argv[3]);
        if (!from || !to) {
            fmt::print(stderr, "gua-plan-bench: FROM and TO are ISO 8601 times\n");
            return 2;
        }
        lo.from = from.value();
        lo.to = to.value();
    }
    const double w0 = wall_seconds();
    const double c0 = cpu_seconds();
    const gua::plan::Demand demand = gua::plan::load_demand(db, lo);
    const double w1 = wall_seconds();
    const double c1 = cpu_seconds();
    const gua::plan::PlanResult result = gua::plan::run_plan(demand, gua::plan::PlanOptions{});
    const double w2 = wall_seconds();
    const double c2 = cpu_seconds();
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    std::int64_t holds = 0;
    for (const gua::plan::Scenario& s : result.scenarios) {
        holds += s.relaunch.holds;
    }
    fmt::print("card-ticks {}  units {}  scenarios {}  holds placed (relaunch, all scenarios) {}\n",
               demand.coverage.raw_ticks, demand.units.size(), result.scenarios.size(), holds);
    fmt::print("read demand: {:.2f} s wall, {:.2f} s CPU\n", w1 - w0, c1 - c0);
    fmt::print("sweep:       {:.2f} s wall, {:.2f} s CPU\n", w2 - w1, c2 - c1);
    fmt::print("peak RSS:    {} MiB\n", ru.ru_maxrss / 1024);
    const gua::plan::Concurrency busy =
        gua::plan::concurrency_of(gua::plan::recorded_placement(demand), demand.recorded);
    fmt::print("recorded busy cards: peak {} p99 {} p95 {}\n", busy.peak, busy.p99, busy.p95);
    for (const gua::plan::Scenario& s : result.scenarios) {
        fmt::print("  T={:>5} {:<9} needed {:>3}-{:<3} peak {:>3} p95 {:>3}\n",
                   gua::plan::timeout_label(s.idle_timeout), gua::plan::to_string(s.share),
                   s.drop.gpus_needed, s.relaunch.gpus_needed, s.relaunch.concurrency.peak,
                   s.relaunch.concurrency.p95);
    }
    return 0;
}
