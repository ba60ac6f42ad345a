// SPDX-License-Identifier: Apache-2.0
// Synthetic workloads. "classic" reproduces gpu-usage-audit's demo exactly (§7 of its reference).
#include "telemetry/synthetic.hpp"

#include <algorithm>
#include <functional>
#include <random>

namespace gua::telemetry {

namespace {

Identity person(std::string user, std::uint32_t uid, std::string command) {
    Identity id;
    id.user = std::move(user);
    id.uid = uid;
    id.command = std::move(command);
    return id;
}

ProcessReading proc(std::uint32_t pid, ProcessType type, std::int64_t mib, Identity who,
                    std::optional<double> sm = std::nullopt) {
    ProcessReading p;
    p.pid = pid;
    p.type = type;
    p.mem_used_mib = mib;
    p.sm_util_pct = sm;
    p.identity = std::move(who);
    return p;
}

/// Fills `poll` with one steady reading for the whole span.
void steady(DevicePoll& poll, double pct, DurationUs span) {
    poll.util_source = UtilSource::samples;
    poll.util.push_back(UtilSample{pct, std::max<DurationUs>(span, 1)});
}

/// Fills `poll` with 1/6 s driver samples alternating between `high` and `low` every `period`.
void bursty(DevicePoll& poll, double high, double low, DurationUs period, TimeUs from, TimeUs to) {
    constexpr DurationUs k_sample = k_us_per_second / 6;
    poll.util_source = UtilSource::samples;
    for (TimeUs t = from; t < to; t += k_sample) {
        const bool on = ((t / period) % 2) == 0;
        poll.util.push_back(UtilSample{on ? high : low, std::min(k_sample, to - t)});
    }
}

/// Clocks-event reason bits (nvmlClocksEventReasons).
constexpr std::int64_t k_sw_power_cap = 0x4;
constexpr std::int64_t k_sw_thermal = 0x20;
/// Every card's readings before a workload's step changes them.
constexpr std::int64_t k_idle_power_mw = 70000;
constexpr std::int64_t k_idle_temperature_c = 40;

using Step = std::function<void(std::vector<DevicePoll>&, std::int64_t tick, TimeUs from, TimeUs to,
                                std::mt19937_64& rng)>;

struct Spec {
    WorkloadInfo info;
    std::vector<DeviceInfo> devices;
    Step step;
};

DeviceInfo card(int index, std::string name, std::int64_t mib) {
    return DeviceInfo{"GPU-" + std::to_string(index) + "a7c3e1f-5b2d-4e8a-9c6f-0d1e2f3a4b5" +
                          std::to_string(index),
                      index,
                      std::move(name),
                      mib,
                      "00000000:" + std::to_string(index + 10) + ":00.0",
                      ""};
}

/// gpu-usage-audit's demo, and a bursty trainer.
void classic_specs(std::vector<Spec>& out) {
    // gpu-usage-audit's FakeTier: GPU-0 trains then idles holding memory then frees; GPU-1 holds a
    // notebook; GPU-2 only has Xorg.
    out.push_back(Spec{
        {"classic", "gpu-usage-audit's demo: a training cycle, an idle notebook, an Xorg-only card",
         30, k_us_per_second},
        {card(0, "NVIDIA A100-SXM4-80GB", 81920), card(1, "NVIDIA A100-SXM4-80GB", 81920),
         card(2, "NVIDIA A100-SXM4-80GB", 81920)},
        [](std::vector<DevicePoll>& polls, std::int64_t tick, TimeUs from, TimeUs to,
           std::mt19937_64&) {
            const DurationUs span = to - from;
            const std::int64_t phase = tick % 5;
            const Identity alice = person("alice", 1001, "python3");
            for (DevicePoll& p : polls) {
                p.readings.max_sm_clock_mhz = 1410;
                p.readings.clock_events = 0;
            }
            if (phase < 2) {
                // The training card sits in a warm rack: its clocks are held back by heat.
                steady(polls[0], 80, span);
                polls[0].processes.push_back(proc(1234, ProcessType::compute, 70000, alice));
                polls[0].readings.temperature_c = 87;
                polls[0].readings.sm_clock_mhz = 1215;
                polls[0].readings.clock_events = k_sw_thermal;
            } else if (phase < 4) {
                steady(polls[0], 2, span);
                polls[0].processes.push_back(proc(1234, ProcessType::compute, 70000, alice));
            } else {
                steady(polls[0], 0, span);
            }
            steady(polls[1], 2, span);
            polls[1].processes.push_back(
                proc(5678, ProcessType::compute, 8000, person("bob", 1002, "ipykernel")));
            polls[1].processes.push_back(proc(9999, ProcessType::compute, 200, Identity{}));
            steady(polls[2], 0, span);
            polls[2].processes.push_back(
                proc(1100, ProcessType::graphics, 128, person("root", 0, "Xorg")));
        }});
    // A data-loader-starved trainer: bursts of 100 % between stretches of 0 %.
    out.push_back(Spec{
        {"bursty",
         "a data-loader-starved trainer (bursts of 100 % between 0 %) beside a steady one", 60,
         10 * k_us_per_second},
        {card(0, "NVIDIA H100 80GB HBM3", 81559), card(1, "NVIDIA H100 80GB HBM3", 81559)},
        [](std::vector<DevicePoll>& polls, std::int64_t, TimeUs from, TimeUs to, std::mt19937_64&) {
            bursty(polls[0], 100, 0, 2 * k_us_per_second, from, to);
            polls[0].processes.push_back(
                proc(2001, ProcessType::compute, 42000, person("carol", 1003, "python3"), 50));
            steady(polls[1], 45, to - from);
            polls[1].processes.push_back(
                proc(2002, ProcessType::compute, 30000, person("dave", 1004, "python3"), 45));
        }});
}

/// A notebook left overnight, and two tenants on one card.
void tenant_specs(std::vector<Spec>& out) {
    // A notebook abandoned overnight: work in office hours, memory held all night.
    out.push_back(Spec{
        {"overnight",
         "a notebook abandoned overnight and over the weekend (one week, 10 min ticks)", 7 * 24 * 6,
         10 * k_us_per_minute},
        {card(0, "NVIDIA A100 80GB PCIe", 81920), card(1, "NVIDIA A100 80GB PCIe", 81920)},
        [](std::vector<DevicePoll>& polls, std::int64_t, TimeUs from, TimeUs to,
           std::mt19937_64& rng) {
            const DurationUs span = to - from;
            const std::int64_t hour = (from / k_us_per_hour) % 24;
            const std::int64_t weekday = (from / k_us_per_day + 4) % 7; // 1970-01-01 was a Thursday
            const bool office = weekday >= 1 && weekday <= 5 && hour >= 9 && hour < 18;
            std::uniform_real_distribution<double> jitter(0, 8);
            Identity erin = person("erin", 1005, "python3");
            erin.jupyter_kernel = "4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f";
            steady(polls[0], office ? 60 + jitter(rng) : jitter(rng) / 4, span);
            polls[0].processes.push_back(proc(3001, ProcessType::compute, 38000, erin));
            steady(polls[1], office && hour < 12 ? 85 : 0, span);
            if (office && hour < 12) {
                polls[1].processes.push_back(
                    proc(3002, ProcessType::compute, 20000, person("frank", 1006, "torchrun")));
            }
        }});
    // Two tenants on one card: one trains, the other holds 20 GiB and does nothing.
    out.push_back(
        Spec{{"cotenants", "two users share one card: one trains, the other holds 20 GiB idle", 60,
              10 * k_us_per_second},
             {card(0, "NVIDIA L40S", 46068)},
             [](std::vector<DevicePoll>& polls, std::int64_t tick, TimeUs from, TimeUs to,
                std::mt19937_64&) {
                 const bool training = tick % 3 != 2;
                 steady(polls[0], training ? 75 : 3, to - from);
                 polls[0].processes.push_back(proc(4001, ProcessType::compute, 16000,
                                                   person("grace", 1007, "python3"),
                                                   training ? 75.0 : 0.0));
                 polls[0].processes.push_back(proc(4002, ProcessType::compute, 20480,
                                                   person("heidi", 1008, "ipykernel"), 0.0));
             }});
}

/// The workloads built for one recommendation rule each.
void rule_specs(std::vector<Spec>& out) {
    // Each of the following is built for one recommendation rule (tests/report/recommend_pipeline).
    // A team's training box: busy in office hours, powered but empty at night and at weekends.
    out.push_back(Spec{
        {"offhours", "a training box busy in office hours, empty nights and weekends (one week)",
         7 * 24 * 6, 10 * k_us_per_minute},
        {card(0, "NVIDIA A100-SXM4-80GB", 81920), card(1, "NVIDIA A100-SXM4-80GB", 81920)},
        [](std::vector<DevicePoll>& polls, std::int64_t, TimeUs from, TimeUs to, std::mt19937_64&) {
            const std::int64_t hour = (from / k_us_per_hour) % 24;
            const std::int64_t weekday = (from / k_us_per_day + 4) % 7; // 1970-01-01: Thursday
            const bool office = weekday >= 1 && weekday <= 5 && hour >= 9 && hour < 18;
            for (std::size_t i = 0; i < polls.size(); ++i) {
                steady(polls[i], office ? 80 : 0, to - from);
                if (office) {
                    polls[i].processes.push_back(proc(5001 + static_cast<std::uint32_t>(i),
                                                      ProcessType::compute, 60000,
                                                      person("ivan", 1009, "torchrun"), 80.0));
                }
            }
        }});
    // A small notebook parked on a big card between experiments, next to a busy trainer.
    out.push_back(Spec{
        {"notebook", "an 8 GiB notebook parked on an 80 GB card 30 % of the time, beside a trainer",
         60, 10 * k_us_per_second},
        {card(0, "NVIDIA A100-SXM4-80GB", 81920), card(1, "NVIDIA A100-SXM4-80GB", 81920)},
        [](std::vector<DevicePoll>& polls, std::int64_t tick, TimeUs from, TimeUs to,
           std::mt19937_64&) {
            const bool running = tick % 10 < 7;
            steady(polls[0], running ? 80 : 1, to - from);
            polls[0].processes.push_back(proc(5501, ProcessType::compute, 8192,
                                              person("mallory", 1013, "ipykernel"),
                                              running ? 80.0 : 1.0));
            steady(polls[1], 85, to - from);
            polls[1].processes.push_back(
                proc(5502, ProcessType::compute, 60000, person("nina", 1014, "torchrun"), 85.0));
        }});
    // Small batches on a big card: steady 40 % with most of the memory free.
    out.push_back(Spec{
        {"steady-under", "a trainer steady at 40 % SM with most of the memory free", 60,
         10 * k_us_per_second},
        {card(0, "NVIDIA A100-SXM4-80GB", 81920)},
        [](std::vector<DevicePoll>& polls, std::int64_t, TimeUs from, TimeUs to, std::mt19937_64&) {
            steady(polls[0], 40, to - from);
            polls[0].processes.push_back(
                proc(6001, ProcessType::compute, 12000, person("judy", 1010, "python3"), 40.0));
        }});
    // A saturated FP32 trainer: steady at 95–99 %.
    out.push_back(Spec{{"computebound", "a trainer steady at 95-99 % SM (compute-bound)", 60,
                        10 * k_us_per_second},
                       {card(0, "NVIDIA H100 80GB HBM3", 81559)},
                       [](std::vector<DevicePoll>& polls, std::int64_t, TimeUs from, TimeUs to,
                          std::mt19937_64& rng) {
                           std::uniform_real_distribution<double> util(95, 99);
                           const double u = util(rng);
                           steady(polls[0], u, to - from);
                           polls[0].processes.push_back(proc(7001, ProcessType::compute, 52000,
                                                             person("kim", 1011, "python3"), u));
                       }});
    // A model that fills the card's memory yet keeps the SMs at 30 %.
    out.push_back(Spec{
        {"memfull", "a trainer holding 95 % of the memory at a steady 30 % SM", 60,
         10 * k_us_per_second},
        {card(0, "NVIDIA A100-SXM4-80GB", 81920)},
        [](std::vector<DevicePoll>& polls, std::int64_t, TimeUs from, TimeUs to, std::mt19937_64&) {
            steady(polls[0], 30, to - from);
            polls[0].processes.push_back(
                proc(8001, ProcessType::compute, 77824, person("leo", 1012, "python3"), 30.0));
        }});
}

/// One finding of §9 per card.
void health_specs(std::vector<Spec>& out) {
    // One finding of §9 per card: heat, a power cap, a light job near full memory, a leaked
    // context beside an idle rank of a job spread over three cards (tests/report/health_demo).
    out.push_back(
        Spec{{"health",
              "four H100s: thermal throttling, a power cap, a busy-but-light job near full memory, "
              "ghost memory beside an idle rank",
              60, 10 * k_us_per_second},
             {card(0, "NVIDIA H100 80GB HBM3", 81559), card(1, "NVIDIA H100 80GB HBM3", 81559),
              card(2, "NVIDIA H100 80GB HBM3", 81559), card(3, "NVIDIA H100 80GB HBM3", 81559)},
             [](std::vector<DevicePoll>& polls, std::int64_t tick, TimeUs from, TimeUs to,
                std::mt19937_64&) {
                 const DurationUs span = to - from;
                 for (DevicePoll& p : polls) {
                     CardReadings& r = p.readings;
                     r.power_limit_mw = 700000;
                     r.max_sm_clock_mhz = 1980;
                     r.sm_clock_mhz = 1980;
                     r.mem_total_mib = 81559;
                     r.mem_reserved_mib = 512;
                     r.clock_events = 0;
                 }
                 const Identity olga = person("olga", 1015, "torchrun");
                 // GPU 0: rank 0, hot two ticks in three.
                 const bool hot = tick % 3 != 2;
                 steady(polls[0], 95, span);
                 polls[0].processes.push_back(proc(9101, ProcessType::compute, 60000, olga, 95.0));
                 polls[0].readings.power_mw = 640000;
                 polls[0].readings.temperature_c = hot ? 89 : 80;
                 polls[0].readings.sm_clock_mhz = hot ? 1650 : 1980;
                 polls[0].readings.clock_events = hot ? k_sw_thermal : 0;
                 // GPM (% × 100): attention-heavy BF16 work, bound by memory bandwidth.
                 polls[0].readings.sm_active_cpct = 9200;
                 polls[0].readings.tensor_active_cpct = 4500;
                 polls[0].readings.dram_bw_cpct = 7200;
                 polls[0].readings.fp32_active_cpct = 800;
                 // GPU 1: rank 1, at its power limit all the time.
                 steady(polls[1], 93, span);
                 polls[1].processes.push_back(proc(9102, ProcessType::compute, 60000, olga, 93.0));
                 polls[1].readings.power_mw = 700000;
                 polls[1].readings.temperature_c = 74;
                 polls[1].readings.sm_clock_mhz = 1755;
                 polls[1].readings.clock_events = k_sw_power_cap;
                 // GPM: FP32 math on the CUDA cores, tensor pipes all but idle.
                 polls[1].readings.sm_active_cpct = 8800;
                 polls[1].readings.tensor_active_cpct = 150;
                 polls[1].readings.dram_bw_cpct = 3000;
                 polls[1].readings.fp32_active_cpct = 5500;
                 // GPU 2: "99 % busy" at 120 W, holding 93 % of the memory.
                 steady(polls[2], 99, span);
                 polls[2].processes.push_back(
                     proc(9201, ProcessType::compute, 76000, person("pat", 1016, "python3"), 99.0));
                 polls[2].readings.power_mw = 120000;
                 polls[2].readings.temperature_c = 45;
                 polls[2].readings.sm_active_cpct = 600; // GPM: one small kernel at a time
                 // GPU 3: rank 2 of olga's job, idle while holding 20 GB, and 6 GiB that no process
                 // accounts for.
                 steady(polls[3], 1, span);
                 polls[3].processes.push_back(proc(9103, ProcessType::compute, 20000, olga, 1.0));
                 polls[3].readings.mem_used_mib = 20000 + 6144;
             }});
}

/// `gua plan`'s known answer.
void plan_specs(std::vector<Spec>& out) {
    // `gua plan`'s known answer (docs/plan.md): eight notebooks opened an hour apart (60 ticks of
    // the default minute), one a card, each active its first hour at 12 % SM, then held idle for
    // seven. Culled after 30 min the
    // same work needs 2 cards; without a policy 8.
    out.push_back(Spec{
        {"staggered", "eight notebooks opened an hour apart, each active 1 h then idle-held 7 h",
         16 * 60, k_us_per_minute},
        {card(0, "NVIDIA A100-SXM4-80GB", 81920), card(1, "NVIDIA A100-SXM4-80GB", 81920),
         card(2, "NVIDIA A100-SXM4-80GB", 81920), card(3, "NVIDIA A100-SXM4-80GB", 81920),
         card(4, "NVIDIA A100-SXM4-80GB", 81920), card(5, "NVIDIA A100-SXM4-80GB", 81920),
         card(6, "NVIDIA A100-SXM4-80GB", 81920), card(7, "NVIDIA A100-SXM4-80GB", 81920)},
        [](std::vector<DevicePoll>& polls, std::int64_t tick, TimeUs from, TimeUs to,
           std::mt19937_64&) {
            const DurationUs span = to - from;
            for (std::size_t i = 0; i < polls.size(); ++i) {
                const auto open = static_cast<std::int64_t>(i) * 60; // in ticks of a minute
                if (tick < open || tick >= open + 8 * 60) {
                    steady(polls[i], 0, span);
                    continue;
                }
                const double sm = tick < open + 60 ? 12.0 : 1.0;
                steady(polls[i], sm, span);
                polls[i].processes.push_back(
                    proc(static_cast<std::uint32_t>(9500 + i), ProcessType::compute, 4000,
                         person("user" + std::to_string(i), static_cast<std::uint32_t>(2000 + i),
                                "ipykernel"),
                         sm));
            }
        }});
}

std::vector<Spec> specs() {
    std::vector<Spec> out;
    classic_specs(out);
    tenant_specs(out);
    rule_specs(out);
    health_specs(out);
    plan_specs(out);
    return out;
}

class SyntheticSource final : public DeviceSource {
  public:
    SyntheticSource(Spec spec, TimeUs origin, DurationUs interval, std::uint64_t seed)
        : m_spec(std::move(spec)), m_origin(origin), m_interval(std::max<DurationUs>(interval, 1)),
          m_rng(seed) {}

    std::string driver_version() override { return "560.35.05-synthetic"; }
    std::vector<DeviceInfo> devices() override { return m_spec.devices; }

    std::vector<DevicePoll> poll(TimeUs now) override {
        const TimeUs from = m_previous.value_or(now);
        m_previous = now;
        std::vector<DevicePoll> polls(m_spec.devices.size());
        for (std::size_t i = 0; i < polls.size(); ++i) {
            polls[i].uuid = m_spec.devices[i].uuid;
            CardReadings& r = polls[i].readings;
            r.mem_util_pct = 0;
            r.temperature_c = k_idle_temperature_c;
            r.power_mw = k_idle_power_mw;
            r.sm_clock_mhz = 1410;
        }
        const std::int64_t tick = (from - m_origin) / m_interval;
        m_spec.step(polls, tick, from, std::max(now, from + 1), m_rng);
        for (DevicePoll& p : polls) {
            std::int64_t used = 0;
            for (const ProcessReading& r : p.processes) {
                used += r.mem_used_mib.value_or(0);
            }
            if (!p.readings.mem_used_mib) { // a step sets it where memory is not all listed
                p.readings.mem_used_mib = used;
            }
            // A busy card draws more and runs warmer, unless the step said otherwise.
            if (!p.util.empty() && p.util.front().pct >= 10) {
                if (p.readings.power_mw == k_idle_power_mw) {
                    p.readings.power_mw = 350000;
                }
                if (p.readings.temperature_c == k_idle_temperature_c) {
                    p.readings.temperature_c = 68;
                }
            }
        }
        return polls;
    }

  private:
    Spec m_spec;
    TimeUs m_origin;
    DurationUs m_interval;
    std::mt19937_64 m_rng;
    std::optional<TimeUs> m_previous;
};

} // namespace

const std::vector<WorkloadInfo>& workloads() {
    static const std::vector<WorkloadInfo> k_list = [] {
        std::vector<WorkloadInfo> v;
        for (const Spec& s : specs()) {
            v.push_back(s.info);
        }
        return v;
    }();
    return k_list;
}

std::unique_ptr<DeviceSource> make_synthetic_source(std::string_view name, TimeUs origin,
                                                    DurationUs interval_us, std::uint64_t seed) {
    for (Spec& s : specs()) {
        if (s.info.name == name) {
            return std::make_unique<SyntheticSource>(std::move(s), origin, interval_us, seed);
        }
    }
    return nullptr;
}

} // namespace gua::telemetry
