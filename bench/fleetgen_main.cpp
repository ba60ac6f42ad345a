// SPDX-License-Identifier: Apache-2.0
// gua-fleetgen: writes the reference fleet workload into a gua database through store::Writer
// (one transaction per tick, rollups included, as the daemon does).
// Usage: gua-fleetgen DB DAYS [GPUS] [--no-health] [--no-gpm | --gpm-per-tick]; prints the ground
// truth and the cost per tick (--no-health: without the health readings of schema 6 and 7,
// --no-gpm: without the GPM readings, --gpm-per-tick: GPM levels that change every tick; to
// compare their storage cost).
#include "fleet_workload.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>

namespace {

double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        fmt::print(
            stderr,
            "usage: gua-fleetgen DB DAYS [GPUS] [--no-health] [--no-gpm | --gpm-per-tick]\n");
        return 2;
    }
    const std::string path = argv[1];
    gua::bench::FleetOptions o;
    o.ticks = std::atoll(argv[2]) * 2880;
    if (argc > 3) {
        o.gpus = std::atoi(argv[3]);
    }
    for (int i = 4; i < argc; ++i) {
        const std::string flag = argv[i];
        if (flag == "--no-health") {
            o.health = false;
        } else if (flag == "--no-gpm") {
            o.gpm = gua::bench::FleetOptions::Gpm::off;
        } else if (flag == "--gpm-per-tick") {
            o.gpm = gua::bench::FleetOptions::Gpm::per_tick;
        } else {
            fmt::print(stderr, "gua-fleetgen: unknown option {}\n", flag);
            return 2;
        }
    }
    for (const char* suffix : {"", "-wal", "-shm"}) {
        std::filesystem::remove(path + suffix);
    }
    gua::store::Database db(path, gua::store::OpenMode::create);
    gua::store::migrate(db);
    gua::store::Writer writer(db, gua::store::RunInfo{"fleet", "560.35.05", "synthetic:fleet",
                                                      o.interval_us, 10.0, o.start});
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = cpu_seconds();
    const gua::bench::FleetTruth truth =
        gua::bench::generate_fleet(o, [&](const gua::telemetry::Tick& t) { writer.write(t); });
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpu_seconds() - cpu0;
    writer.finish(o.start + o.ticks * o.interval_us);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    fmt::print("card_ticks={} active={} idle_held={} truly_idle={} processes={} "
               "generate_and_write_ms_per_tick={:.4f} (cpu {:.4f})\n",
               o.ticks * o.gpus, truth.active, truth.idle_held, truth.truly_idle, truth.processes,
               secs * 1000.0 / static_cast<double>(o.ticks),
               cpu * 1000.0 / static_cast<double>(o.ticks));
    return 0;
}
