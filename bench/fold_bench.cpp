// SPDX-License-Identifier: Apache-2.0
// gua-fold-bench: the per-tick cost of folding polls into a tick (TickBuilder) on the reference
// workload of docs/PERFORMANCE.md — 8 cards × 16 processes, six 5 s polls of 30 ring samples per
// 30 s tick, then finish() — best of several rounds, in µs of the thread's CPU time per tick (so
// that other work on a shared machine inflates it little). Built against the fold's
// public interface only, so the same file measures an older fold (-DGUA_FOLD_BENCH_NO_TIMES:
// add_poll without poll times).
#include "identity/resolver.hpp"
#include "sampler/fold.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

constexpr int k_cards = 8;
constexpr int k_processes = 16;
constexpr int k_polls = 6;
constexpr int k_samples = 30;
constexpr gua::DurationUs k_poll_us = 5 * gua::k_us_per_second;

std::vector<gua::telemetry::DevicePoll> make_polls(int poll) {
    std::vector<gua::telemetry::DevicePoll> polls;
    for (int c = 0; c < k_cards; ++c) {
        gua::telemetry::DevicePoll& d = polls.emplace_back();
        d.uuid = fmt::format("GPU-{:08x}-0000-0000-0000-000000000000", c);
        d.util_source = gua::telemetry::UtilSource::samples;
        for (int s = 0; s < k_samples; ++s) {
            // Busy and idle periods, so that both the active split and the held decision run.
            d.util.push_back({(s + poll + c) % 3 == 0 ? 0.0 : 80.0, 166'666});
        }
        for (int p = 0; p < k_processes; ++p) {
            gua::telemetry::ProcessReading& r = d.processes.emplace_back();
            r.pid = static_cast<std::uint32_t>(10'000 + c * 100 + p);
            r.mem_used_mib = 1000 + 10 * p;
            r.sm_util_pct = 5.0 * (p % 4);
            gua::telemetry::Identity who;
            who.user = fmt::format("user{}", p % 5);
            r.identity = who;
        }
    }
    return polls;
}

double cpu_us() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

} // namespace

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
    constexpr int k_ticks = 500;
    std::unordered_map<std::string, gua::telemetry::DeviceInfo> devices;
    std::vector<std::vector<gua::telemetry::DevicePoll>> polls;
    for (int k = 0; k < k_polls; ++k) {
        polls.push_back(make_polls(k));
    }
    for (const auto& d : polls.front()) {
        devices[d.uuid] = gua::telemetry::DeviceInfo{d.uuid, 0, "Card", 81920, "", ""};
    }
    gua::identity::Resolver resolver{"/nonexistent-proc"};
    gua::sampler::TickBuilder builder{gua::audit::Thresholds{}, resolver};
    gua::telemetry::Tick tick;
    double best = 1e300;
    std::int64_t mono = 0;
    for (int r = 0; r < rounds; ++r) {
        const double start = cpu_us();
        for (int t = 0; t < k_ticks; ++t) {
            builder.start(1767607200LL * gua::k_us_per_second + mono);
            for (const auto& poll : polls) {
                mono += k_poll_us;
#ifdef GUA_FOLD_BENCH_NO_TIMES
                builder.add_poll(poll, k_poll_us, devices);
#else
                gua::sampler::PollTimes times;
                times.end_mono_us = mono;
                times.boot_offset_us = 1000 * gua::k_us_per_second;
                builder.add_poll(poll, k_poll_us, devices, times);
#endif
            }
            builder.finish(static_cast<std::uint64_t>(t), tick);
        }
        best = std::min(best, (cpu_us() - start) / k_ticks);
    }
    fmt::print(
        "fold: {:.1f} µs of CPU per tick (best of {} rounds of {} ticks; {} cards × {} processes, "
        "{} polls)\n",
        best, rounds, k_ticks, k_cards, k_processes, k_polls);
    return 0;
}
