// SPDX-License-Identifier: Apache-2.0
// gua-fleetgen: writes the reference fleet workload into a gua database through store::Writer
// (one transaction per tick, rollups included, as the daemon does).
// Usage: gua-fleetgen DB DAYS [GPUS] [--no-health] [--no-gpm | --gpm-per-tick] [--allocations];
// prints the ground truth and the cost per tick (--no-health: without the health readings of
// schema 6 and 7, --no-gpm: without the GPM readings, --gpm-per-tick: GPM levels that change every
// tick, --allocations: every card allocated to Slurm jobs of 3–8 h with gaps between them, edges
// inside ticks; to compare their storage cost).
#include "fleet_workload.hpp"
#include "sampler/allocation_fold.hpp"
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

using gua::DurationUs;
using gua::k_us_per_hour;
using gua::k_us_per_minute;
using gua::k_us_per_second;
using gua::TimeUs;

/// Jobs on one card: job n lasts 3–8 h and is followed by a gap of 0–80 min, the edges at odd
/// seconds (inside ticks). Gives the allocation segments of a tick and crosses them with the
/// card-tick as the sampler does (one span per tick: the generator has no finer timing).
class CardJobs {
  public:
    CardJobs(int gpu, TimeUs start) : m_gpu(gpu), m_edge(start + gpu * 7 * k_us_per_minute) {}

    void cross(gua::telemetry::CardTickRecord& c, TimeUs t0, DurationUs duration) {
        std::vector<gua::alloc::Segment> segments;
        TimeUs at = t0;
        const TimeUs end = t0 + duration;
        while (at < end) {
            while (m_edge <= at) {
                advance();
            }
            gua::alloc::Segment s;
            s.begin = at;
            s.end = std::min(end, m_edge);
            s.state = m_in_job ? gua::alloc::AllocationState::allocated
                               : gua::alloc::AllocationState::unallocated;
            if (m_in_job) {
                s.allocations.push_back({gua::alloc::AllocationKind::slurm_job,
                                         std::to_string(1000 + m_gpu * 10000 + m_job), "user",
                                         "account"});
            }
            segments.push_back(std::move(s));
            at = segments.back().end;
        }
        const DurationUs active = c.active_us.value_or(0);
        const DurationUs not_held = c.idle_unlisted_us;
        const DurationUs held =
            c.active_us ? std::max<DurationUs>(
                              duration - c.unmeasured_us - active - c.idle_unknown_us - not_held, 0)
                        : 0;
        gua::sampler::AllocationFold fold;
        fold.add(t0, end, {},
                 {static_cast<double>(active), static_cast<double>(held),
                  static_cast<double>(not_held)});
        fold.cross(segments, t0, duration, c);
    }

  private:
    void advance() {
        m_in_job = !m_in_job;
        if (m_in_job) {
            ++m_job;
            m_edge += (3 + (m_job * 7 + m_gpu) % 6) * k_us_per_hour + 13 * k_us_per_second;
        } else {
            m_edge += ((m_job + m_gpu) % 3) * 40 * k_us_per_minute + 17 * k_us_per_second;
        }
    }
    int m_gpu;
    TimeUs m_edge;
    bool m_in_job = false;
    int m_job = 0;
};

} // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        fmt::print(stderr,
                   "usage: gua-fleetgen DB DAYS [GPUS] [--no-health] [--no-gpm | --gpm-per-tick] "
                   "[--allocations]\n");
        return 2;
    }
    const std::string path = argv[1];
    gua::bench::FleetOptions o;
    bool allocations = false;
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
        } else if (flag == "--allocations") {
            allocations = true;
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
    std::vector<CardJobs> jobs;
    for (int g = 0; g < o.gpus; ++g) {
        jobs.emplace_back(g, o.start);
    }
    gua::telemetry::Tick crossed;
    const gua::bench::FleetTruth truth =
        gua::bench::generate_fleet(o, [&](const gua::telemetry::Tick& t) {
            if (!allocations) {
                writer.write(t);
                return;
            }
            crossed = t;
            for (std::size_t i = 0; i < crossed.cards.size(); ++i) {
                jobs[i % jobs.size()].cross(crossed.cards[i], t.t0, t.duration_us);
            }
            writer.write(crossed);
        });
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
