// gua-fleetgen: writes the reference fleet workload into a gua database through store::Writer.
// Usage: gua-fleetgen DB DAYS [GPUS]; prints the ground truth and the write cost per tick.
#include "fleet_workload.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

int main(int argc, char** argv) {
    if (argc < 3) {
        fmt::print(stderr, "usage: gua-fleetgen DB DAYS [GPUS]\n");
        return 2;
    }
    const std::string path = argv[1];
    gua::bench::FleetOptions o;
    o.ticks = std::atoll(argv[2]) * 2880;
    if (argc > 3) {
        o.gpus = std::atoi(argv[3]);
    }
    std::filesystem::remove(path);
    gua::store::Database db(path, gua::store::OpenMode::create);
    gua::store::migrate(db);
    gua::store::Writer writer(db, gua::store::RunInfo{"fleet", "560.35.05", "synthetic:fleet",
                                                      o.interval_us, 10.0, o.start});
    const auto t0 = std::chrono::steady_clock::now();
    const gua::bench::FleetTruth truth =
        gua::bench::generate_fleet(o, [&](const gua::telemetry::Tick& t) { writer.write(t); });
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    writer.finish(o.start + o.ticks * o.interval_us);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    const double card_ticks = static_cast<double>(o.ticks * o.gpus);
    fmt::print("card_ticks={} active={} idle_held={} truly_idle={} processes={} "
               "write_ms_per_tick={:.4f}\n",
               o.ticks * o.gpus, truth.active, truth.idle_held, truth.truly_idle, truth.processes,
               secs * 1000.0 / static_cast<double>(o.ticks));
    (void)card_ticks;
    return 0;
}
