// SPDX-License-Identifier: Apache-2.0
// End to end: `gua now --prometheus` and `gua top --prometheus` against a real Prometheus on
// loopback scraping three gua daemons on the fake NVML — cards active, idle-held (one from the
// start, one after a known switch, one shared by two users), truly idle, and a host whose daemon
// is stopped. States, holders, held memory and idle-held durations are checked against the
// scenarios' own schedule; the stopped host must read as down, never idle.
#include "policy/support.hpp"

namespace gua::policy_e2e {
using policy_test::Child; // what e2e/pty_top.hpp runs gua top as
} // namespace gua::policy_e2e

#include "e2e/pty_top.hpp"
#include "fleet/daemon_host.hpp"
#include "fleet/prometheus_server.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <pwd.h>
#include <set>
#include <sstream>

namespace gua::fleet_testing::fleet_now_test {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr double k_scrape_s = 1.0;
/// Scenario second at which host B's GPU 0 stops computing and its holder keeps 30000 MiB.
constexpr double k_switch_s = 8.0;
/// How long the test lets B's GPU 0 idle-hold before it asks (longer than --window 10s).
constexpr double k_idle_wanted_s = 16.0;

/// The user name the daemons give a holder started as `uid` (Holder runs as ourselves when it
/// cannot switch).
std::string user_of(unsigned uid) {
    const bool switched = getuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0;
    const uid_t id = switched ? uid : getuid();
    const passwd* pw = getpwuid(id);
    return pw != nullptr ? pw->pw_name : "uid:" + std::to_string(id);
}

json device(const std::string& uuid, const json& util) {
    return {{"uuid", uuid}, {"util", util}};
}

json proc(int device, const char* pid_env, int mib, const json& sm) {
    return {{"device", device}, {"pid_env", pid_env}, {"memory_mib", {{0, mib}}}, {"sm_util", sm}};
}

/// Host A: GPU 0 computing at 90 %, GPU 1 held idle with 8000 MiB from the start, GPU 2 free.
json scenario_a() {
    return {{"time_scale", 1},
            {"devices",
             {device("GPU-a0000000-0000-0000-0000-000000000000", {{0, 90}}),
              device("GPU-a0000000-0000-0000-0000-000000000001", {{0, 0}}),
              device("GPU-a0000000-0000-0000-0000-000000000002", {{0, 0}})}},
            {"processes",
             {proc(0, "HOLDER_1", 20000, {{0, 90}}), proc(1, "HOLDER_2", 8000, {{0, 0}})}}};
}

/// Host B: GPU 0 computing until k_switch_s, then held idle with 30000 MiB; GPU 1 held idle by two
/// users, 6000 and 2000 MiB.
json scenario_b() {
    return {{"time_scale", 1},
            {"devices",
             {device("GPU-b0000000-0000-0000-0000-000000000000", {{0, 80}, {k_switch_s, 0}}),
              device("GPU-b0000000-0000-0000-0000-000000000001", {{0, 0}})}},
            {"processes",
             {proc(0, "HOLDER_1", 30000, {{0, 80}, {k_switch_s, 0}}),
              proc(1, "HOLDER_2", 6000, {{0, 0}}), proc(1, "HOLDER_3", 2000, {{0, 0}})}}};
}

/// Host C: one card held idle; its daemon is stopped before the test asks.
json scenario_c() {
    return {{"time_scale", 1},
            {"devices", {device("GPU-c0000000-0000-0000-0000-000000000000", {{0, 0}})}},
            {"processes", {proc(0, "HOLDER_1", 4000, {{0, 0}})}}};
}

json now_json(const std::string& url, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{"now", "--prometheus", url, "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const test::RunResult r = test::run_gua(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? json::parse(r.out) : json::object();
}

const json& gpu_of(const json& doc, const std::string& uuid) {
    for (const json& g : doc.at("gpus")) {
        if (g.at("uuid") == uuid) {
            return g;
        }
    }
    throw std::runtime_error("no GPU " + uuid);
}

double seconds_since(TimeUs t, const json& iso) {
    const Result<TimeUs> at = parse_iso8601(iso.get<std::string>());
    return at ? static_cast<double>(at.value() - t) / 1e6 : -1e9;
}

/// Whether a table line is the row of `host`'s GPU `gpu` in state `state` (its first words).
bool is_row(const std::string& line, const std::string& host, const std::string& state) {
    std::istringstream in(line);
    std::string h;
    std::string g;
    std::string st;
    in >> h >> g >> st;
    return h == host && g == "0" && st == state;
}

/// The index of the first line of `text` that is_row, or npos.
std::size_t row_index(const std::string& text, const std::string& host, const std::string& state) {
    std::istringstream in(text);
    std::size_t i = 0;
    for (std::string line; std::getline(in, line); ++i) {
        if (is_row(line, host, state)) {
            return i;
        }
    }
    return std::string::npos;
}

std::set<std::string> keys(const json& o) {
    std::set<std::string> out;
    for (const auto& [k, v] : o.items()) {
        out.insert(k);
    }
    return out;
}

/// The fleet: three hosts scraped every second, C's daemon stopped once scraped.
struct Fleet {
    test::TempDir temp;
    Holder a1{1001}, a2{1002}, b1{1003}, b2{1001}, b3{1002}, c1{1003};
    std::uint16_t pa = free_port(), pb = free_port(), pc = free_port();
    std::string ta = "127.0.0.1:" + std::to_string(pa);
    std::string tb = "127.0.0.1:" + std::to_string(pb);
    std::string tc = "127.0.0.1:" + std::to_string(pc);
    PrometheusServer prom{std::filesystem::path(temp.path()) / "prom", {ta, tb, tc}};
    std::unique_ptr<DaemonHost> a, b, c;
    TimeUs b_started = 0; ///< wall time just before host B's daemon started (scenario time 0)
};

class FleetNowE2E : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        if (access(k_prometheus, X_OK) != 0 || !fake_nvml_available()) {
            return;
        }
        s_fleet = new Fleet;
        Fleet& f = *s_fleet;
        ASSERT_TRUE(f.prom.wait_ready(30s));
        const std::filesystem::path dir(f.temp.path());
        f.a = std::make_unique<DaemonHost>(dir, "host-a", scenario_a(), f.pa,
                                           Env{{"HOLDER_1", f.a1.pid()}, {"HOLDER_2", f.a2.pid()}});
        f.b_started = wall_now();
        f.b = std::make_unique<DaemonHost>(
            dir, "host-b", scenario_b(), f.pb,
            Env{{"HOLDER_1", f.b1.pid()}, {"HOLDER_2", f.b2.pid()}, {"HOLDER_3", f.b3.pid()}});
        f.c = std::make_unique<DaemonHost>(dir, "host-c", scenario_c(), f.pc,
                                           Env{{"HOLDER_1", f.c1.pid()}});
        ASSERT_TRUE(f.prom.wait_value("count(gua_daemon_ticks_total > 2)", 3, 40s))
            << test::read_text(f.a->log()) << test::read_text(f.b->log());
        // C's idle-held card grew in at least two scrapes (a tick seen) before C stops.
        ASSERT_TRUE(f.prom.wait_value(
            "count(changes(gua_gpu_seconds_total{state=\"idle_held\"}[1m]) >= 2)", 3, 40s));
        f.c->stop();
        ASSERT_TRUE(f.prom.wait_value("count(up == 0)", 1, 20s));
        const double left =
            k_switch_s + k_idle_wanted_s - static_cast<double>(wall_now() - f.b_started) / 1e6;
        if (left > 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(left * 1000)));
        }
    }
    static void TearDownTestSuite() {
        delete s_fleet;
        s_fleet = nullptr;
    }
    void SetUp() override {
        if (s_fleet == nullptr) {
            GTEST_SKIP() << "prometheus or the fake NVML missing (scripts/install-deps.sh --test)";
        }
    }
    static Fleet* s_fleet;
};

Fleet* FleetNowE2E::s_fleet = nullptr;

/// What every view of the fleet must show, worked out from the scenarios.
void expect_fleet(const json& doc, Fleet& f, const std::string& what, bool c_in_window) {
    SCOPED_TRACE(what);
    ASSERT_EQ(doc.at("hosts").size(), 3u);
    for (const json& h : doc.at("hosts")) {
        EXPECT_EQ(h.at("status"), h.at("host") == f.tc ? "down" : "ok") << h.dump();
    }
    // B's GPU 0: idle-held since scenario second k_switch_s, by its one holder with 30000 MiB.
    const json& b0 = gpu_of(doc, "GPU-b0000000-0000-0000-0000-000000000000");
    EXPECT_EQ(b0.at("state"), "idle-held");
    const double truth = seconds_since(f.b_started, b0.at("as_of")) - k_switch_s;
    const double got = b0.at("idle_held_s").get<double>();
    std::cout << "[ figures  ] " << what << ": B GPU 0 idle-held " << got << " s, scenario "
              << truth << " s, delta " << got - truth << " s\n";
    EXPECT_NEAR(got, truth, k_scrape_s + 0.5) << "one scrape interval and the daemon's start";
    EXPECT_FALSE(b0.at("state_for_at_least"));
    ASSERT_EQ(b0.at("holders").size(), 1u);
    EXPECT_EQ(b0["holders"][0]["user"], user_of(1003));
    EXPECT_NEAR(b0["holders"][0]["memory_mib"].get<double>(), 30000, 1);
    EXPECT_NEAR(b0["holders"][0]["idle_held_s"].get<double>(), got, 1e-6);
    // B's GPU 1: two idle holders, their memory split as they hold it.
    const json& b1 = gpu_of(doc, "GPU-b0000000-0000-0000-0000-000000000001");
    EXPECT_EQ(b1.at("state"), "idle-held");
    ASSERT_EQ(b1.at("holders").size(), 2u);
    EXPECT_EQ(b1["holders"][0]["user"], user_of(1001));
    EXPECT_NEAR(b1["holders"][0]["memory_mib"].get<double>(), 6000, 1);
    EXPECT_EQ(b1["holders"][1]["user"], user_of(1002));
    EXPECT_NEAR(b1["holders"][1]["memory_mib"].get<double>(), 2000, 1);
    // A's cards: idle-held from the start (Prometheus saw only part of it: a lower bound),
    // active, truly idle.
    const json& a1 = gpu_of(doc, "GPU-a0000000-0000-0000-0000-000000000001");
    EXPECT_EQ(a1.at("state"), "idle-held");
    EXPECT_TRUE(a1.at("state_for_at_least"));
    const double a_truth = seconds_since(f.b_started, a1.at("as_of"));
    EXPECT_LE(a1.at("idle_held_s").get<double>(), a_truth + k_scrape_s);
    // Its lower bound: from the first sample Prometheus holds of the card (a 1 s subquery finds
    // it to within a second).
    const double first_sample_s =
        f.prom.value("min_over_time(timestamp(gua_gpu_seconds_total{uuid=\"" +
                     a1["uuid"].get<std::string>() + "\",state=\"idle_held\"})[10m:1s])");
    const double seen = seconds_since(static_cast<TimeUs>(first_sample_s * 1e6), a1.at("as_of"));
    EXPECT_NEAR(a1.at("idle_held_s").get<double>(), seen, 2 * k_scrape_s)
        << "from the first sample on";
    EXPECT_EQ(a1["holders"][0]["user"], user_of(1002));
    EXPECT_NEAR(a1["holders"][0]["memory_mib"].get<double>(), 8000, 1);
    const json& a0 = gpu_of(doc, "GPU-a0000000-0000-0000-0000-000000000000");
    EXPECT_EQ(a0.at("state"), "active");
    ASSERT_EQ(a0.at("holders").size(), 1u);
    EXPECT_EQ(a0["holders"][0]["user"], user_of(1001));
    EXPECT_EQ(a0["holders"][0]["state"], "active");
    EXPECT_TRUE(a0.at("idle_held_s").is_null());
    const json& a2 = gpu_of(doc, "GPU-a0000000-0000-0000-0000-000000000002");
    EXPECT_EQ(a2.at("state"), "truly-idle");
    EXPECT_TRUE(a2.at("holders").empty());
    // C's card: down, never idle, with what it last did.
    const json& c0 = gpu_of(doc, "GPU-c0000000-0000-0000-0000-000000000000");
    EXPECT_EQ(c0.at("state"), "down");
    EXPECT_EQ(c0.at("host_status"), "down");
    if (c_in_window) { // its last ticks are inside --window
        EXPECT_EQ(c0.at("last_state"), "idle-held");
    }
    EXPECT_TRUE(c0.at("idle_held_s").is_null());
    // Worst waste first: B's 30000 MiB, then the 8000 MiB cards; the down host last.
    const json& gpus = doc.at("gpus");
    ASSERT_EQ(gpus.size(), 6u);
    EXPECT_EQ(gpus[0]["uuid"], b0["uuid"]);
    EXPECT_EQ(gpus[1]["state"], "idle-held");
    EXPECT_EQ(gpus[2]["state"], "idle-held");
    EXPECT_EQ(gpus[3]["state"], "truly-idle");
    EXPECT_EQ(gpus[4]["state"], "active");
    EXPECT_EQ(gpus[5]["state"], "down");
}

TEST_F(FleetNowE2E, JsonShowsEachCardsStateHoldersAndIdleHeldTime) {
    const json doc = now_json(s_fleet->prom.url());
    expect_fleet(doc, *s_fleet, "--window 10m", true);
    EXPECT_EQ(keys(doc),
              (std::set<std::string>{"schema_version", "source", "prometheus", "host_label", "now",
                                     "window_s", "lookback_s", "hosts", "gpus"}));
    EXPECT_EQ(keys(doc["hosts"][0]),
              (std::set<std::string>{"host", "status", "detail", "last_tick", "last_scrape",
                                     "tick_interval_s", "scrape_interval_s", "gpus"}));
    EXPECT_EQ(
        keys(doc["gpus"][0]),
        (std::set<std::string>{"host", "host_status", "gpu", "uuid", "model", "state", "last_state",
                               "state_for_s", "state_for_at_least", "idle_held_s", "as_of",
                               "utilization_pct", "memory_used_mib", "memory_total_mib",
                               "idle_held_mib_hours", "holders", "allocations"}));
    EXPECT_EQ(keys(doc["gpus"][0]["holders"][0]),
              (std::set<std::string>{"user", "state", "memory_mib", "idle_held_s",
                                     "idle_held_at_least"}));
    EXPECT_NEAR(doc["hosts"][0]["scrape_interval_s"].get<double>(), k_scrape_s, 0.1);
}

TEST_F(FleetNowE2E, StreaksLongerThanTheWindowAreFollowedBack) {
    // B's GPU 0 has idle-held longer than --window: the rest comes from the wider read.
    expect_fleet(now_json(s_fleet->prom.url(), {"--window", "10s"}), *s_fleet, "--window 10s",
                 false);
}

TEST_F(FleetNowE2E, TextListsTheRowsWorstFirst) {
    const test::RunResult r = test::run_gua({"now", "--prometheus", s_fleet->prom.url()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("hosts: 2 ok, 1 down"), std::string::npos) << r.out;
    const std::size_t b0 = row_index(r.out, s_fleet->tb, "idle-held");
    const std::size_t active = row_index(r.out, s_fleet->ta, "active");
    const std::size_t down = row_index(r.out, s_fleet->tc, "down");
    EXPECT_NE(b0, std::string::npos) << r.out;
    EXPECT_NE(down, std::string::npos) << r.out;
    EXPECT_LT(b0, active);
    EXPECT_LT(active, down);
    EXPECT_NE(r.out.find("down (was idle-held)"), std::string::npos) << r.out;
}

TEST_F(FleetNowE2E, TopRendersTheSameRowsAndQuitsOnQ) {
    policy_e2e::PtyTop top({"--prometheus", s_fleet->prom.url(), "--interval", "1s"}, 30, 200);
    const auto has_rows = [&](const std::vector<std::string>& lines) {
        bool b0 = false;
        bool down = false;
        for (const std::string& l : lines) {
            b0 = b0 || is_row(l, s_fleet->tb, "idle-held");
            down = down || is_row(l, s_fleet->tc, "down");
        }
        return b0 && down;
    };
    ASSERT_TRUE(top.frame_until(0, "q quit", has_rows, 20s)) << top.output();
    ASSERT_TRUE(top.frame_until(1, "q quit", has_rows, 20s)) << "a second frame refreshed";
    top.send("q");
    const std::optional<int> status = top.wait_exit(10s);
    ASSERT_TRUE(status);
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
}

TEST(FleetNowErrors, BadUrlOrUnreachableServerIsOneLineAndFails) {
    const test::RunResult bad = test::run_gua({"now", "--prometheus", "ftp://127.0.0.1:1"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("expected an http:// or https:// URL"), std::string::npos) << bad.err;
    const std::string closed = "http://127.0.0.1:" + std::to_string(free_port());
    for (const char* command : {"now", "top"}) {
        const test::RunResult r = test::run_gua({command, "--prometheus", closed});
        EXPECT_EQ(r.exit_code, 1) << command;
        EXPECT_NE(r.err.find("cannot query Prometheus at " + closed), std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
    const test::RunResult mixed =
        test::run_gua({"now", "--prometheus", closed, "--db", "/nonexistent.db"});
    EXPECT_EQ(mixed.exit_code, 2) << "--prometheus excludes --db";
}

} // namespace gua::fleet_testing::fleet_now_test
