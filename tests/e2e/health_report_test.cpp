// SPDX-License-Identifier: Apache-2.0
// §9 Health end to end: the real `gua daemon` on the fake driver with a simulated clock, then
// `gua report`; every figure is held to the scenario integrated here over the card-ticks the
// daemon recorded (energy within 1 %), and a card without any power reading shows "n/a".
#include "e2e/truth_harness.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gua::e2e {
namespace health_report_test { // named after the file: unique in a unity batch

constexpr double k_start_s = 600;
constexpr double k_interval_s = 30;
constexpr int k_ticks = 20;       // [600, 1200)
constexpr double k_after = 0.001; // changes lie 1 ms after a poll (see health_record_test)
constexpr std::uint32_t k_uid_a = 1500;
constexpr std::uint32_t k_uid_b = 1501;
constexpr std::uint32_t k_uid_c = 1502;

double at(double t) {
    return t + k_after;
}

std::string uuid(int i) {
    return fmt::format("GPU-e0e0{:04d}-0000-0000-0000-000000000000", i);
}

/// The integral of a piecewise-constant series over [a, b), optionally only where `keep` holds
/// (`keep` may change only where one of `also` does).
double integral(const test::Series& s, double a, double b,
                const std::function<bool(double)>& keep = nullptr,
                const std::vector<test::Series>& also = {}) {
    std::vector<double> cuts{a};
    s.breaks(a, b, cuts);
    for (const test::Series& x : also) {
        x.breaks(a, b, cuts);
    }
    cuts.push_back(b);
    std::sort(cuts.begin(), cuts.end());
    double total = 0;
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
        if (!keep || keep(cuts[i])) {
            total += s.at(cuts[i]) * (cuts[i + 1] - cuts[i]);
        }
    }
    return total;
}

/// A process held by a real sleeper: `mib` held, `sm` SM utilization.
json sleeper_proc(int device, const std::string& env, const json& mib, const json& sm) {
    return {{"device", device}, {"pid_env", env}, {"memory_mib", mib}, {"sm_util", sm}};
}

class HealthReport : public TruthTest {
  protected:
    /// Scenario-time spans of each card's recorded card-ticks, by uuid.
    std::map<std::string, std::vector<test::Span>> recorded_spans() const {
        test::RawDb raw(db());
        const auto rows = raw.rows("SELECT g.uuid AS uuid, c.t0_us AS t0, c.duration_us AS d "
                                   "FROM card_tick c JOIN gpu g ON g.id = c.gpu_id");
        TimeUs first = std::numeric_limits<TimeUs>::max();
        for (const auto& row : rows) {
            first = std::min<TimeUs>(first, std::stoll(row.at("t0")));
        }
        std::map<std::string, std::vector<test::Span>> spans;
        for (const auto& row : rows) {
            const double from =
                k_start_s + static_cast<double>(std::stoll(row.at("t0")) - first) / 1e6;
            spans[row.at("uuid")].push_back(
                {from, from + static_cast<double>(std::stoll(row.at("d"))) / 1e6});
        }
        return spans;
    }

    /// Runs the daemon over `scenario`, then `gua report` in `format` with `config`.
    std::string run_and_report(const json& scenario, const std::string& config,
                               const std::string& format) {
        write_scenario(scenario);
        set_clock(k_start_s);
        set_env("GUA_TEST_CLOCK_FILE", clock_path());
        const test::RunResult d =
            run_daemon({"--interval", fmt::format("{}ms", std::llround(k_interval_s * 1000)),
                        "--ticks", std::to_string(k_ticks), "--quiet"},
                       FakeVariant::modern, 60s);
        EXPECT_EQ(d.exit_code, 0) << d.err;
        write_atomically(config_path(), config);
        return report(format);
    }

    std::string report(const std::string& format) const {
        const test::RunResult r = test::run_gua(
            {"report", "--db", db(), "--config", config_path(), "--from", "2000-01-01T00:00:00Z",
             "--to", "2100-01-01T00:00:00Z", "--format", format, "--top", "1000"});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.out;
    }
};

TEST_F(HealthReport, EnergyPerCardStateAndIdentityMatchesTheScenario) {
    spawn_sleeper(k_uid_a, "GUA_HEALTH_A");
    spawn_sleeper(k_uid_b, "GUA_HEALTH_B");
    spawn_sleeper(k_uid_c, "GUA_HEALTH_C");
    // Card 0 (energy counter): active until 780, idle-held until 1080, then truly idle (its
    // process frees its memory); power changes inside ticks. Card 1 (no energy counter: power ×
    // time) active until 900, then idle-held; power steps at tick boundaries. Card 2 has no power
    // reading at all.
    const json scenario = {
        {"devices",
         {{{"uuid", uuid(0)},
           {"util", {{0, 80}, {at(780), 0}}},
           {"power_mw",
            {{0, 300000},
             {at(700), 250000},
             {at(850), 90000},
             {at(1000), 60000},
             {at(1100), 55000}}}},
          {{"uuid", uuid(1)},
           {"util", {{0, 95}, {at(900), 0}}},
           {"power_mw", {{0, 200000}, {at(900), 120000}}},
           {"not_supported", {"nvmlDeviceGetTotalEnergyConsumption"}}},
          {{"uuid", uuid(2)},
           {"util", {{0, 50}}},
           {"not_supported", {"nvmlDeviceGetTotalEnergyConsumption", "nvmlDeviceGetPowerUsage"}}}}},
        {"processes",
         {sleeper_proc(0, "GUA_HEALTH_A", {{0, 8000}, {at(1080), 0}}, {{0, 80}, {at(780), 0}}),
          sleeper_proc(1, "GUA_HEALTH_B", {{0, 6000}}, {{0, 95}, {at(900), 0}}),
          sleeper_proc(2, "GUA_HEALTH_C", {{0, 4000}}, {{0, 50}})}}};
    const json j = json::parse(run_and_report(
        scenario, "[energy]\nprice_per_kwh = 0.20\ngrams_co2_per_kwh = 400\n", "json"));
    const auto spans = recorded_spans();
    ASSERT_EQ(spans.size(), 3U);

    // Truth, integrated from the scenario over the recorded card-ticks (mW·s → kWh).
    const double k_mws_per_kwh = 3.6e9;
    struct Truth {
        double kwh = 0;
        std::array<double, 3> state_kwh{}; // active, idle-held, truly idle
        double hours = 0;
    };
    std::map<std::string, Truth> truth;
    const auto state_of = [&](int card, double t) {
        const double util = test::Series(scenario["devices"][card]["util"]).at(t);
        const double held = test::Series(scenario["processes"][card]["memory_mib"]).at(t);
        return util >= 10 ? 0 : held > 100 ? 1 : 2;
    };
    for (int card = 0; card < 2; ++card) {
        const test::Series power(scenario["devices"][card]["power_mw"]);
        const std::vector<test::Series> state_series{
            test::Series(scenario["devices"][card]["util"]),
            test::Series(scenario["processes"][card]["memory_mib"])};
        Truth& t = truth[uuid(card)];
        for (const test::Span& s : spans.at(uuid(card))) {
            t.kwh += integral(power, s.from_s, s.to_s) / k_mws_per_kwh;
            t.hours += (s.to_s - s.from_s) / 3600.0;
            for (int state = 0; state < 3; ++state) {
                t.state_kwh[static_cast<std::size_t>(state)] +=
                    integral(
                        power, s.from_s, s.to_s,
                        [&](double x) { return state_of(card, x) == state; }, state_series) /
                    k_mws_per_kwh;
            }
        }
    }
    const json& h = j.at("health");
    ASSERT_EQ(h.at("gpus").size(), 3U);
    double total = 0;
    double held_total = 0;
    for (const json& g : h.at("gpus")) {
        const std::string id = g.at("uuid");
        const json& e = g.at("energy");
        SCOPED_TRACE(id);
        if (id == uuid(2)) {
            EXPECT_TRUE(e.at("kwh").is_null()) << "no power reading: n/a, never 0";
            EXPECT_TRUE(e.at("idle_held_kwh").is_null());
            EXPECT_EQ(e.at("counter_gpu_hours"), 0.0);
            EXPECT_EQ(e.at("power_gpu_hours"), 0.0);
            continue;
        }
        const Truth& t = truth.at(id);
        ASSERT_FALSE(e.at("kwh").is_null());
        EXPECT_NEAR(e.at("kwh").get<double>(), t.kwh, 0.01 * t.kwh);
        EXPECT_NEAR(e.at("active_kwh").get<double>(), t.state_kwh[0], 0.01 * t.kwh);
        EXPECT_NEAR(e.at("idle_held_kwh").get<double>(), t.state_kwh[1], 0.01 * t.kwh);
        EXPECT_NEAR(e.at("truly_idle_kwh").get<double>(), t.state_kwh[2], 0.01 * t.kwh);
        // Which source covered the card's time, and that it is said.
        const double counter_h = e.at("counter_gpu_hours");
        const double power_h = e.at("power_gpu_hours");
        EXPECT_NEAR(id == uuid(0) ? counter_h : power_h, t.hours, 1e-6);
        EXPECT_EQ(id == uuid(0) ? power_h : counter_h, 0.0);
        total += t.kwh;
        held_total += t.state_kwh[1];
        std::cout << fmt::format("  {}: {:.6f} kWh (truth {:.6f}); active {:.6f}/{:.6f} "
                                 "idle-held {:.6f}/{:.6f} truly idle {:.6f}/{:.6f}\n",
                                 id, e.at("kwh").get<double>(), t.kwh,
                                 e.at("active_kwh").get<double>(), t.state_kwh[0],
                                 e.at("idle_held_kwh").get<double>(), t.state_kwh[1],
                                 e.at("truly_idle_kwh").get<double>(), t.state_kwh[2]);
    }
    EXPECT_NEAR(h.at("energy").at("kwh").get<double>(), total, 0.01 * total);
    // Priced at 0.20 per kWh and 400 g per kWh.
    EXPECT_NEAR(h.at("cost_cents").get<double>(), total * 20, std::max(1.0, 0.01 * total * 20));
    EXPECT_NEAR(h.at("idle_held_cost_cents").get<double>(), held_total * 20,
                std::max(1.0, 0.01 * held_total * 20));
    EXPECT_NEAR(h.at("co2_kg").get<double>(), total * 0.4, 0.01 * total * 0.4);
    EXPECT_NEAR(h.at("idle_held_co2_kg").get<double>(), held_total * 0.4, 0.01 * held_total * 0.4);
    // Identities: each holds one card alone, so its energy is that card's active + idle-held
    // energy; carol's card has no reading.
    std::map<std::string, json> ids;
    for (const json& r : h.at("identities")) {
        ids[r.at("name")] = r;
    }
    const Truth& ta = truth.at(uuid(0));
    const Truth& tb = truth.at(uuid(1));
    ASSERT_TRUE(ids.contains(user_label(k_uid_a)));
    ASSERT_TRUE(ids.contains(user_label(k_uid_b)));
    ASSERT_TRUE(ids.contains(user_label(k_uid_c)));
    const double alice = ta.state_kwh[0] + ta.state_kwh[1];
    const double bob = tb.state_kwh[0] + tb.state_kwh[1];
    EXPECT_NEAR(ids[user_label(k_uid_a)].at("kwh").get<double>(), alice, 0.01 * alice);
    EXPECT_NEAR(ids[user_label(k_uid_b)].at("kwh").get<double>(), bob, 0.01 * bob);
    EXPECT_TRUE(ids[user_label(k_uid_c)].at("kwh").is_null()) << "n/a, never 0";

    // The text report says the same: n/a for the card without power, the source per card.
    const std::string text = report("text");
    const std::size_t at9 = text.find("§9 Health");
    ASSERT_NE(at9, std::string::npos) << text;
    const std::string section = text.substr(at9, text.find("\n\n", at9) - at9);
    EXPECT_NE(section.find("energy counter"), std::string::npos) << section;
    EXPECT_NE(section.find("power × time"), std::string::npos) << section;
    EXPECT_NE(section.find("n/a"), std::string::npos) << section;
    EXPECT_NE(section.find("electricity: $"), std::string::npos) << section;
    std::cout << section << "\n";
}

/// Seconds of [a, b) during which the bit set of `reasons` has `bit`.
double seconds_with(const test::Series& reasons, std::uint64_t bit, double a, double b) {
    return integral(test::Series(json::array({json::array({0.0, 1.0})})), a, b,
                    [&](double t) {
                        return (static_cast<std::uint64_t>(std::llround(reasons.at(t))) & bit) != 0;
                    },
                    {reasons});
}

TEST_F(HealthReport, ThrottleSharesClockLostAndFindingsMatchTheScenario) {
    // Card 0 is busy throughout; its clocks-event reasons change inside ticks, its SM clock at
    // tick ends. Card 1's driver reads no reasons and no highest clock: n/a, never 0 %.
    const json reasons = {{0, 0x0},       {at(700), 0x40},  {at(760), 0x44},
                          {at(850), 0x4}, {at(1000), 0x20}, {at(1100), 0x0}};
    const json clock = {{0, 1980}, {at(780), 1410}, {at(990), 1700}};
    const json scenario = {
        {"devices",
         {{{"uuid", uuid(0)},
           {"util", {{0, 80}}},
           {"max_sm_clock_mhz", {{0, 1980}}},
           {"sm_clock_mhz", clock},
           {"clock_event_reasons", reasons}},
          {{"uuid", uuid(1)},
           {"util", {{0, 80}}},
           {"not_supported",
            {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons",
             "nvmlDeviceGetMaxClockInfo"}}}}}};
    const json j = json::parse(run_and_report(scenario, "", "json"));
    const auto spans = recorded_spans();
    const test::Series r(reasons);
    const test::Series c(clock);
    double active_s = 0;
    double clock_int = 0;
    std::map<std::uint64_t, double> truth_s;
    for (const test::Span& s : spans.at(uuid(0))) {
        active_s += s.to_s - s.from_s;
        clock_int += integral(c, s.from_s, s.to_s);
        for (std::uint64_t bit : {0x4, 0x8, 0x20, 0x40, 0x10, 0x80}) {
            truth_s[bit] += seconds_with(r, bit, s.from_s, s.to_s);
        }
    }
    const json& gpus = j.at("health").at("gpus");
    ASSERT_EQ(gpus.size(), 2U);
    const json& t0 =
        gpus[0].at("uuid") == uuid(0) ? gpus[0].at("throttle") : gpus[1].at("throttle");
    const json& t1 =
        gpus[0].at("uuid") == uuid(0) ? gpus[1].at("throttle") : gpus[0].at("throttle");
    const std::vector<std::pair<std::string, std::uint64_t>> fields{
        {"sw_power_cap_share", 0x4}, {"hw_slowdown_share", 0x8}, {"sw_thermal_share", 0x20},
        {"hw_thermal_share", 0x40},  {"sync_boost_share", 0x10}, {"hw_power_brake_share", 0x80}};
    for (const auto& [name, bit] : fields) {
        ASSERT_FALSE(t0.at(name).is_null()) << name;
        EXPECT_NEAR(t0.at(name).get<double>(), truth_s[bit] / active_s, 0.01) << name;
        EXPECT_TRUE(t1.at(name).is_null()) << name << ": not read is n/a, never 0 %";
    }
    ASSERT_FALSE(t0.at("clock_ratio").is_null());
    const double ratio = clock_int / (1980.0 * active_s);
    EXPECT_NEAR(t0.at("clock_ratio").get<double>(), ratio, 0.01);
    EXPECT_TRUE(t1.at("clock_ratio").is_null());
    std::cout << fmt::format("  power cap {:.4f}/{:.4f} hw thermal {:.4f}/{:.4f} sw thermal "
                             "{:.4f}/{:.4f} clock {:.4f}/{:.4f} (gua/truth)\n",
                             t0.at("sw_power_cap_share").get<double>(), truth_s[0x4] / active_s,
                             t0.at("hw_thermal_share").get<double>(), truth_s[0x40] / active_s,
                             t0.at("sw_thermal_share").get<double>(), truth_s[0x20] / active_s,
                             t0.at("clock_ratio").get<double>(), ratio);
    // Heat held the clocks back 25 % of the time and the power cap 40 %: both findings, on card 0.
    std::map<std::string, json> findings;
    for (const json& f : j.at("health").at("findings")) {
        findings[f.at("id")] = f;
    }
    ASSERT_TRUE(findings.contains("thermal-throttling"));
    ASSERT_TRUE(findings.contains("power-capping"));
    EXPECT_NEAR(findings["thermal-throttling"].at("share").get<double>(),
                std::max(truth_s[0x40], truth_s[0x20]) / active_s, 0.01);
    EXPECT_NEAR(findings["power-capping"].at("share").get<double>(),
                std::max(truth_s[0x4], truth_s[0x80]) / active_s, 0.01);
    for (const json& f : j.at("health").at("findings")) {
        if (f.at("id") == "thermal-throttling" || f.at("id") == "power-capping") {
            EXPECT_EQ(f.at("gpu"), 0) << "none for the card without readings";
        }
    }
}

TEST_F(HealthReport, MemoryPressureAndGhostMemoryMatchTheScenario) {
    spawn_sleeper(k_uid_a, "GUA_HEALTH_A");
    // Card 0 (80000 MiB): its process grows to 70000 MiB at 780; 4096 MiB that no process
    // accounts for appear at 900 and go at 1080, taking it over 90 % meanwhile. Card 1's driver
    // has no MemoryInfo_v2: no reservation, hence no ghost memory (n/a).
    const json extra = {{0, 0}, {at(900), 4096}, {at(1080), 0}};
    const json proc_mib = {{0, 8000}, {at(780), 70000}};
    const json scenario = {{"devices",
                            {{{"uuid", uuid(0)},
                              {"util", {{0, 80}}},
                              {"memory_total_mib", 80000},
                              {"memory_reserved_mib", 500},
                              {"extra_used_mib", extra}},
                             {{"uuid", uuid(1)},
                              {"util", {{0, 80}}},
                              {"memory_total_mib", 80000},
                              {"not_supported", {"nvmlDeviceGetMemoryInfo_v2"}}}}},
                           {"processes", {sleeper_proc(0, "GUA_HEALTH_A", proc_mib, {{0, 80}})}}};
    const json j = json::parse(run_and_report(scenario, "", "json"));
    const auto spans = recorded_spans();
    const test::Series e(extra);
    const test::Series p(proc_mib);
    double recorded_s = 0;
    double pressure_s = 0;
    double ghost_mib_s = 0;
    std::optional<double> first_ghost_s;
    for (const test::Span& s : spans.at(uuid(0))) {
        recorded_s += s.to_s - s.from_s;
        pressure_s +=
            integral(test::Series(json::array({json::array({0.0, 1.0})})), s.from_s, s.to_s,
                     [&](double t) { return e.at(t) + p.at(t) >= 0.9 * 80000; }, {e, p});
        ghost_mib_s += integral(e, s.from_s, s.to_s);
        if (e.at(s.to_s) > 100 && (!first_ghost_s || s.from_s < *first_ghost_s)) {
            first_ghost_s = s.from_s; // the first card-tick whose poll sees it (rows unordered)
        }
    }
    const json& gpus = j.at("health").at("gpus");
    ASSERT_EQ(gpus.size(), 2U);
    const json& m0 = gpus[0].at("uuid") == uuid(0) ? gpus[0].at("memory") : gpus[1].at("memory");
    const json& m1 = gpus[0].at("uuid") == uuid(0) ? gpus[1].at("memory") : gpus[0].at("memory");
    ASSERT_FALSE(m0.at("pressure_share").is_null());
    EXPECT_NEAR(m0.at("pressure_share").get<double>(), pressure_s / recorded_s, 0.01);
    const double ghost_gib_h = ghost_mib_s / 1024 / 3600;
    ASSERT_FALSE(m0.at("ghost_gib_hours").is_null());
    EXPECT_NEAR(m0.at("ghost_gib_hours").get<double>(), ghost_gib_h, 0.01 * ghost_gib_h);
    ASSERT_TRUE(first_ghost_s.has_value());
    test::RawDb raw(db());
    const TimeUs first_t0 =
        std::stoll(raw.rows("SELECT min(t0_us) AS t FROM card_tick")[0].at("t"));
    EXPECT_EQ(m0.at("ghost_first_seen"),
              format_iso8601(first_t0 + std::llround((*first_ghost_s - k_start_s) * 1e6)));
    EXPECT_TRUE(m1.at("ghost_gib_hours").is_null()) << "not read: n/a, never 0";
    EXPECT_TRUE(m1.at("ghost_first_seen").is_null());
    std::cout << fmt::format("  pressure {:.4f}/{:.4f} ghost {:.6f}/{:.6f} GiB-h (gua/truth)\n",
                             m0.at("pressure_share").get<double>(), pressure_s / recorded_s,
                             m0.at("ghost_gib_hours").get<double>(), ghost_gib_h);
    std::map<std::string, json> findings;
    for (const json& f : j.at("health").at("findings")) {
        findings[f.at("id")] = f;
    }
    EXPECT_TRUE(findings.contains("memory-pressure"));
    EXPECT_TRUE(findings.contains("ghost-memory"));
}

TEST_F(HealthReport, BusyButLightMatchesTheScenario) {
    spawn_sleeper(k_uid_a, "GUA_HEALTH_A");
    spawn_sleeper(k_uid_b, "GUA_HEALTH_B");
    // Both cards are busy throughout. Card 0 (limit 400 W) draws 60 W = 15 % from 780 to 960:
    // light at the default 30 %. Card 1's driver reads no power limit: n/a, never 0 %.
    const json power = {{0, 300000}, {at(780), 60000}, {at(960), 250000}};
    const json scenario = {{"devices",
                            {{{"uuid", uuid(0)},
                              {"util", {{0, 80}}},
                              {"power_mw", power},
                              {"power_limit_mw", {{0, 400000}}}},
                             {{"uuid", uuid(1)},
                              {"util", {{0, 80}}},
                              {"power_mw", {{0, 50000}}},
                              {"not_supported", {"nvmlDeviceGetEnforcedPowerLimit"}}}}},
                           {"processes",
                            {sleeper_proc(0, "GUA_HEALTH_A", {{0, 8000}}, {{0, 80}}),
                             sleeper_proc(1, "GUA_HEALTH_B", {{0, 8000}}, {{0, 80}})}}};
    const json j = json::parse(run_and_report(scenario, "", "json"));
    const auto spans = recorded_spans();
    const test::Series p(power);
    double active_s = 0;
    double light_s = 0;
    for (const test::Span& s : spans.at(uuid(0))) {
        active_s += s.to_s - s.from_s;
        light_s += integral(test::Series(json::array({json::array({0.0, 1.0})})), s.from_s, s.to_s,
                            [&](double t) { return p.at(t) < 0.3 * 400000; }, {p});
    }
    const json& gpus = j.at("health").at("gpus");
    ASSERT_EQ(gpus.size(), 2U);
    const bool first = gpus[0].at("uuid") == uuid(0);
    const json& l0 = gpus[first ? 0 : 1].at("busy_but_light");
    const json& l1 = gpus[first ? 1 : 0].at("busy_but_light");
    ASSERT_FALSE(l0.at("share").is_null());
    EXPECT_NEAR(l0.at("share").get<double>(), light_s / active_s, 0.01);
    EXPECT_NEAR(l0.at("light_gpu_hours").get<double>(), light_s / 3600, 0.01 * active_s / 3600);
    // Priced like the rest of the waste: the built-in example price of an H100, 4.00 per hour.
    EXPECT_NEAR(l0.at("cents").get<double>(), light_s / 3600 * 400, 1.0);
    EXPECT_TRUE(l1.at("share").is_null()) << "no power limit: n/a, never 0 %";
    EXPECT_TRUE(l1.at("cents").is_null());
    std::map<std::string, json> ids;
    for (const json& r : j.at("health").at("identities")) {
        ids[r.at("name")] = r.at("busy_but_light");
    }
    ASSERT_TRUE(ids.contains(user_label(k_uid_a)));
    EXPECT_NEAR(ids[user_label(k_uid_a)].at("share").get<double>(), light_s / active_s, 0.01);
    EXPECT_TRUE(ids[user_label(k_uid_b)].at("share").is_null());
    bool finding = false;
    for (const json& f : j.at("health").at("findings")) {
        finding = finding || (f.at("id") == "busy-but-light" && f.at("gpu") == 0);
    }
    EXPECT_TRUE(finding);
    std::cout << fmt::format("  light {:.4f}/{:.4f} (gua/truth)\n", l0.at("share").get<double>(),
                             light_s / active_s);
}

TEST_F(HealthReport, GpmMeansFindingsAndLightMatchTheScenario) {
    // Both cards busy throughout, drawing well above 30 % of their limit (never light by power).
    // Card 0: FP32 math on the CUDA cores (tensor 1 %, FP32 55 %), its SMs nearly idle from 960
    // ("busy" but light by GPM). Card 1: tensor-heavy and bound by DRAM bandwidth (75 %).
    const json sm0 = {{0, 88}, {at(960), 10}};
    const json scenario = {
        {"devices",
         {{{"uuid", uuid(0)},
           {"util", {{0, 95}}},
           {"power_mw", {{0, 600000}}},
           {"power_limit_mw", {{0, 700000}}},
           {"gpm",
            {{"supported", true},
             {"not_supported_metrics", {3}}, // SM occupancy
             {"metrics", {{"2", sm0}, {"5", {{0, 1}}}, {"10", {{0, 30}}}, {"12", {{0, 55}}}}}}}},
          {{"uuid", uuid(1)},
           {"util", {{0, 90}}},
           {"power_mw", {{0, 650000}}},
           {"power_limit_mw", {{0, 700000}}},
           {"gpm",
            {{"supported", true},
             {"metrics",
              {{"2", {{0, 90}}}, {"5", {{0, 50}}}, {"10", {{0, 75}}}, {"12", {{0, 10}}}}}}}}}}};
    const json j = json::parse(run_and_report(scenario, "", "json"));
    const auto spans = recorded_spans();
    // Truth: each metric's mean over the card's recorded (all active) time, and the time with
    // SM active under 20 %.
    const auto mean_of = [&](const json& series, int card) {
        const test::Series x(series);
        double active = 0;
        double sum = 0;
        for (const test::Span& sp : spans.at(uuid(card))) {
            active += sp.to_s - sp.from_s;
            sum += integral(x, sp.from_s, sp.to_s);
        }
        return sum / active / 100.0;
    };
    double active0 = 0;
    double light0 = 0;
    const test::Series sm(sm0);
    for (const test::Span& sp : spans.at(uuid(0))) {
        active0 += sp.to_s - sp.from_s;
        light0 += integral(test::Series(json::array({json::array({0.0, 1.0})})), sp.from_s, sp.to_s,
                           [&](double t) { return sm.at(t) < 20; }, {sm});
    }
    const json& gpus = j.at("health").at("gpus");
    ASSERT_EQ(gpus.size(), 2U);
    const bool first = gpus[0].at("uuid") == uuid(0);
    const json& g0 = gpus[first ? 0 : 1];
    const json& g1 = gpus[first ? 1 : 0];
    EXPECT_NEAR(g0.at("gpm").at("sm_active").at("mean").get<double>(), mean_of(sm0, 0), 0.01);
    EXPECT_NEAR(g0.at("gpm").at("tensor_active").at("mean").get<double>(), 0.01, 0.01);
    EXPECT_NEAR(g0.at("gpm").at("fp32_active").at("mean").get<double>(), 0.55, 0.01);
    EXPECT_NEAR(g1.at("gpm").at("dram_bandwidth").at("mean").get<double>(), 0.75, 0.01);
    EXPECT_TRUE(g0.at("gpm").at("sm_occupancy").at("mean").is_null()) << "not supported: n/a";
    EXPECT_EQ(g0.at("gpm").at("sm_occupancy").at("known_gpu_hours"), 0.0);
    // Busy but light by GPM, although the power says busy.
    const json& l0 = g0.at("busy_but_light");
    EXPECT_EQ(l0.at("by"), "gpm");
    EXPECT_NEAR(l0.at("share").get<double>(), light0 / active0, 0.01);
    EXPECT_EQ(g1.at("busy_but_light").at("share").get<double>(), 0.0);
    std::map<std::string, std::vector<int>> found;
    for (const json& f : j.at("health").at("findings")) {
        found[f.at("id")].push_back(f.at("gpu"));
    }
    EXPECT_EQ(found["tensor-idle"], std::vector<int>{0});
    EXPECT_EQ(found["dram-bound"], std::vector<int>{1});
    EXPECT_EQ(found["busy-but-light"], std::vector<int>{0});
    // §8: the tensor-idle remedy's bound is the FP32 pipes' busy time on the hours read.
    bool remedy = false;
    for (const json& r : j.at("recommendations").at("health")) {
        if (r.at("id") == "tensor-idle") {
            remedy = true;
            const double known = g0.at("gpm").at("fp32_active").at("known_gpu_hours");
            EXPECT_NEAR(known, active0 / 3600, 0.05 * active0 / 3600);
            EXPECT_NEAR(r.at("at_most_gpu_hours").get<double>(), known * 0.55, 0.01 * known);
        }
    }
    EXPECT_TRUE(remedy);
    std::cout << fmt::format("  sm active {:.4f}/{:.4f}, light {:.4f}/{:.4f} (gua/truth)\n",
                             g0.at("gpm").at("sm_active").at("mean").get<double>(), mean_of(sm0, 0),
                             l0.at("share").get<double>(), light0 / active0);
}

TEST_F(HealthReport, ImbalanceOfOneIdentityOverTwoCards) {
    spawn_sleeper(k_uid_a, "GUA_HEALTH_A");
    // Alice holds two cards: card 0 busy throughout, card 1 busy only until 720 (a straggler
    // waiting on the other): active 100 % and 20 % of the held time.
    const json scenario = {
        {"devices",
         {{{"uuid", uuid(0)}, {"util", {{0, 90}}}},
          {{"uuid", uuid(1)}, {"util", {{0, 90}, {at(720), 0}}}}}},
        {"processes",
         {sleeper_proc(0, "GUA_HEALTH_A", {{0, 8000}}, {{0, 90}}),
          sleeper_proc(1, "GUA_HEALTH_A", {{0, 8000}}, {{0, 90}, {at(720), 0}})}}};
    const json j = json::parse(run_and_report(scenario, "", "json"));
    const auto spans = recorded_spans();
    const test::Series u(scenario["devices"][1]["util"]);
    double held_s = 0;
    double active_s = 0;
    for (const test::Span& s : spans.at(uuid(1))) {
        held_s += s.to_s - s.from_s;
        active_s += integral(test::Series(json::array({json::array({0.0, 1.0})})), s.from_s, s.to_s,
                             [&](double t) { return u.at(t) >= 10; }, {u});
    }
    const json* found = nullptr;
    for (const json& f : j.at("health").at("findings")) {
        if (f.at("id") == "imbalance") {
            found = &f;
        }
    }
    ASSERT_NE(found, nullptr) << j.at("health").at("findings").dump();
    EXPECT_EQ(found->at("gpu"), 1);
    EXPECT_NEAR(found->at("share").get<double>(), 1.0 - active_s / held_s, 0.01);
    EXPECT_NE(found->at("detail").get<std::string>().find(user_label(k_uid_a)), std::string::npos);
    std::cout << fmt::format("  imbalance {:.4f}/{:.4f} (gua/truth)\n",
                             found->at("share").get<double>(), 1.0 - active_s / held_s);
}

} // namespace health_report_test
} // namespace gua::e2e
