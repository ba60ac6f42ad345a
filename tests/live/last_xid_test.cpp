// SPDX-License-Identifier: Apache-2.0
// A card's last Xid in `gua now` and `gua top`: faults stored through the store at known times
// show on the right card with their code, age and process, in the live model, its text and its
// JSON, and through the real binary; a card without faults, or whose fault is older than the
// 24-hour window, shows none; gua's "GPU missing" record is never shown as an Xid.
#include "faults/catalog.hpp"
#include "live/render.hpp"
#include "live/source.hpp"
#include "policy/support.hpp"
#include "store/faults.hpp"
#include "store/recent.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace gua::live {
namespace last_xid_test { // named after the file: unique in a unity batch

using nlohmann::json;

constexpr DurationUs k_s = k_us_per_second;
constexpr DurationUs k_h = 3600 * k_s;
constexpr DurationUs k_tick = 30 * k_s;

const std::string k_gpu0 = policy_test::card(0, 0, k_tick, {}).device.uuid;
const std::string k_gpu1 = policy_test::card(1, 0, k_tick, {}).device.uuid;

/// Ten 30 s ticks of two cards ending at `end` (GPU 0 held idle by alice's pid 534), the run left
/// open as a running daemon leaves it.
void record(store::Database& db, TimeUs end) {
    store::migrate(db);
    const TimeUs start = end - 10 * k_tick;
    store::Writer w(db, store::RunInfo{"node-1", "560.35.05", "nvml", k_tick, 10.0, start});
    for (int k = 0; k < 10; ++k) {
        w.write(policy_test::tick(
            static_cast<std::uint64_t>(k), start + k * k_tick, k_tick,
            {policy_test::card(0, 0, k_tick, {policy_test::process(534, 53400, 4096, 0.0)}),
             policy_test::card(1, 95, k_tick, {policy_test::process(777, 77700, 2048, 95.0)})}));
    }
}

telemetry::FaultEvent fault(const std::string& uuid, int xid, TimeUs at) {
    telemetry::FaultEvent e;
    e.uuid = uuid;
    e.xid = xid;
    e.at_us = at;
    e.sources = telemetry::fault_from_nvml;
    return e;
}

/// GPU 0: Xid 13 five hours before `now`, then Xid 79 three hours before it with alice's
/// python3 on the card; GPU 1: Xid 43 25 hours before `now` (outside the window); and gua's
/// record of a missing GPU on GPU 0, one hour before `now`, which is no Xid.
void store_faults(store::Database& db, TimeUs now) {
    telemetry::FaultEvent off_bus = fault(k_gpu0, 79, now - 3 * k_h);
    telemetry::Identity alice;
    alice.user = "alice";
    alice.command = "python3";
    off_bus.holders = {{534, "python3", alice}};
    telemetry::FaultEvent missing = fault(k_gpu0, faults::k_gpu_missing_code, now - k_h);
    missing.sources = 0;
    const std::int64_t run = db.scalar("SELECT max(id) FROM run");
    store::insert_faults(
        db, run,
        {fault(k_gpu1, 43, now - 25 * k_h), fault(k_gpu0, 13, now - 5 * k_h), off_bus, missing});
}

const json& gpu(const json& now, int index) {
    for (const json& g : now.at("gpus")) {
        if (g.at("index") == index) {
            return g;
        }
    }
    throw std::runtime_error("no gpu " + std::to_string(index));
}

TEST(LiveNowXid, EachCardShowsItsNewestXidOfTheLastDay) {
    test::TempDir dir;
    store::Database db(dir.file("gua.db"), store::OpenMode::create);
    const TimeUs end = 1778486400LL * k_s; // 2026-05-11T08:00:00Z
    const TimeUs now = end + 2 * k_s;
    record(db, end);
    store_faults(db, now);

    const NowModel m = now_from_database(db, db.path(), store::read_recent(db), LiveOptions{}, now);
    ASSERT_EQ(m.gpus.size(), 2U);
    EXPECT_EQ(m.xid_window_us, 24 * k_h);
    ASSERT_TRUE(m.gpus[0].last_xid.has_value());
    const LastXid& x = *m.gpus[0].last_xid;
    EXPECT_EQ(x.code, 79) << "the newest real Xid: 13 is older, the missing-GPU record no Xid";
    EXPECT_EQ(x.at, now - 3 * k_h);
    EXPECT_EQ(x.whose, "hardware");
    EXPECT_EQ(x.pid, 534U) << "the card's only process at the fault";
    EXPECT_EQ(x.command, "python3");
    EXPECT_EQ(x.user, "alice");
    EXPECT_FALSE(m.gpus[1].last_xid.has_value()) << "its Xid 43 is 25 h old";

    const json j = json::parse(render_now_json(m));
    const json& last = gpu(j, 0).at("last_xid");
    EXPECT_EQ(last.at("code"), 79);
    EXPECT_EQ(last.at("at"), "2026-05-11T05:00:02Z");
    EXPECT_DOUBLE_EQ(last.at("age_seconds").get<double>(), 3 * 3600.0);
    EXPECT_EQ(last.at("whose"), "hardware");
    EXPECT_EQ(last.at("pid"), 534);
    EXPECT_EQ(last.at("user"), "alice");
    EXPECT_NE(last.at("meaning").get<std::string>().find("bus"), std::string::npos) << last;
    EXPECT_FALSE(gpu(j, 1).contains("last_xid")) << "absent, not null, without a fault";

    const std::string text = render_now_text(m, NowTextOptions{});
    EXPECT_NE(text.find("     last Xid 79, 3h ago: "), std::string::npos) << text;
    EXPECT_NE(text.find("(hardware fault; pid 534 python3, alice)"), std::string::npos) << text;
    EXPECT_EQ(text.find("Xid 43"), std::string::npos) << text;
}

TEST(LiveNowXid, AWiderWindowShowsTheOlderFaultAndTopShowsTheLine) {
    test::TempDir dir;
    store::Database db(dir.file("gua.db"), store::OpenMode::create);
    const TimeUs end = 1778486400LL * k_s;
    const TimeUs now = end + 2 * k_s;
    record(db, end);
    store_faults(db, now);
    LiveOptions options;
    options.xid_window_us = 26 * k_h;
    const NowModel m = now_from_database(db, db.path(), store::read_recent(db), options, now);
    ASSERT_TRUE(m.gpus[1].last_xid.has_value());
    EXPECT_EQ(m.gpus[1].last_xid->code, 43);
    EXPECT_EQ(m.gpus[1].last_xid->whose, "application");
    EXPECT_FALSE(m.gpus[1].last_xid->pid.has_value()) << "no holders stored, no kernel log pid";

    const std::string frame = render_top_frame(m, TopView{}, NowTextOptions{}, 2 * k_s, 0);
    EXPECT_NE(frame.find("     last Xid 43, 1d1h ago: "), std::string::npos) << frame;
}

TEST(LiveNowXid, NoFaultTableOrNoFaultsShowsNothing) {
    test::TempDir dir;
    store::Database db(dir.file("gua.db"), store::OpenMode::create);
    const TimeUs end = 1778486400LL * k_s;
    record(db, end);
    const NowModel m =
        now_from_database(db, db.path(), store::read_recent(db), LiveOptions{}, end + k_s);
    for (const GpuNow& g : m.gpus) {
        EXPECT_FALSE(g.last_xid.has_value()) << g.index;
    }
    EXPECT_EQ(render_now_text(m, NowTextOptions{}).find("Xid"), std::string::npos);
}

TEST(NowXidE2E, TheBinaryShowsTheLastXidOfEachCard) {
    test::TempDir dir;
    const std::string path = dir.file("gua.db");
    const TimeUs now = wall_now();
    {
        store::Database db(path, store::OpenMode::create);
        record(db, now);
        store_faults(db, now);
    }
    const test::RunResult r = test::run_gua({"now", "--db", path, "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    ASSERT_EQ(j.at("source").at("kind"), "daemon") << r.out;
    const json& last = gpu(j, 0).at("last_xid");
    EXPECT_EQ(last.at("code"), 79);
    EXPECT_EQ(last.at("at"), format_iso8601(now - 3 * k_h));
    const double age = last.at("age_seconds");
    EXPECT_GE(age, 3 * 3600.0);
    EXPECT_LT(age, 3 * 3600.0 + 60.0) << "the age counts from the command's own clock";
    EXPECT_FALSE(gpu(j, 1).contains("last_xid"));

    const test::RunResult text = test::run_gua({"now", "--db", path});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("last Xid 79, 3h ago: "), std::string::npos) << text.out;
}

} // namespace last_xid_test
} // namespace gua::live
