// SPDX-License-Identifier: Apache-2.0
// The SQLite store: migrations and file identity, the Writer → Reader round trip, dimension rows,
// the documented views (read with the plain sqlite3 C API) and the chunked scan.
#include "core/fatal.hpp"
#include "store/database.hpp"
#include "store/reader.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"
#include "support/raw_db.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace gua::store {
namespace store_test { // named after the file: unique in a unity batch

constexpr TimeUs k_t0 = 1767607200LL * k_us_per_second; // 2026-01-05T10:00:00Z
constexpr DurationUs k_dur = 30 * k_us_per_second;

using test::RawDb;

telemetry::DeviceInfo device(int index, std::string name = "NVIDIA A100-SXM4-80GB") {
    return telemetry::DeviceInfo{"GPU-" + std::to_string(index) + "0000000-1111-2222-3333-4444",
                                 index,
                                 std::move(name),
                                 81920,
                                 "00000000:1" + std::to_string(index) + ":00.0",
                                 ""};
}

telemetry::Identity person(const std::string& user, std::optional<std::uint32_t> uid,
                           const std::string& command) {
    telemetry::Identity id;
    id.user = user;
    id.uid = uid;
    id.command = command;
    return id;
}

telemetry::ProcessTick process(std::uint32_t pid, telemetry::Identity who,
                               std::optional<std::int64_t> mib, std::optional<double> sm = {},
                               telemetry::ProcessType type = telemetry::ProcessType::compute,
                               std::optional<std::uint64_t> start_ticks = 1000) {
    telemetry::ProcessTick p;
    p.pid = pid;
    p.start_ticks = start_ticks;
    p.identity = std::move(who);
    p.type = type;
    p.mem_used_mib = mib;
    p.sm_util_pct = sm;
    return p;
}

telemetry::CardTickRecord card(int index, std::optional<DurationUs> active,
                               std::vector<telemetry::ProcessTick> procs = {}) {
    telemetry::CardTickRecord c;
    c.device = device(index);
    c.active_us = active;
    if (active) {
        c.util_source = telemetry::UtilSource::samples;
        c.util_pct = 100.0 * static_cast<double>(*active) / static_cast<double>(k_dur);
        c.bucket_us = {k_dur - *active, 0, 0, *active};
        c.util_samples = 6;
    }
    c.processes = std::move(procs);
    return c;
}

telemetry::Tick make_tick(TimeUs t0, std::vector<telemetry::CardTickRecord> cards) {
    telemetry::Tick t;
    t.t0 = t0;
    t.duration_us = k_dur;
    t.cards = std::move(cards);
    return t;
}

RunInfo run_info() {
    return RunInfo{"testhost", "560.35.05", "synthetic:test", k_dur, 10.0, k_t0};
}

std::vector<audit::CardTick> scan_all(Database& db, TimeUs from = 0,
                                      TimeUs to = k_t0 + 30 * k_us_per_day) {
    std::vector<audit::CardTick> out;
    Reader(db).scan(from, to, [&](const audit::CardTick& t) { out.push_back(t); });
    return out;
}

class Store : public ::testing::Test {
  protected:
    test::TempDir m_dir;
    std::string m_path = m_dir.file("gua.db");
};

TEST_F(Store, MigrateCreatesTheSchema) {
    {
        Database db(m_path, OpenMode::create);
        migrate(db);
        migrate(db); // idempotent
        EXPECT_EQ(db.scalar("PRAGMA user_version"), k_schema_version);
        EXPECT_EQ(db.scalar("PRAGMA application_id"), 0x47554131);
        check_readable(db);
    }
    RawDb raw(m_path);
    EXPECT_EQ(raw.one("PRAGMA journal_mode"), "wal");
    EXPECT_EQ(raw.one("PRAGMA user_version"), std::to_string(k_schema_version));
    EXPECT_EQ(raw.one("PRAGMA application_id"), std::to_string(0x47554131));
    const auto objects = raw.rows("SELECT name FROM sqlite_schema WHERE type IN ('table','view') "
                                  "ORDER BY name");
    std::vector<std::string> names;
    for (const auto& r : objects) {
        names.push_back(r.at("name"));
    }
    const std::vector<std::string> expected{"allocation",
                                            "allocation_span",
                                            "allocation_summarized",
                                            "allocation_summary",
                                            "block_card",
                                            "block_tick",
                                            "card_tick",
                                            "card_tick_state",
                                            "fault_event",
                                            "gpu",
                                            "identity",
                                            "policy_action",
                                            "policy_decision",
                                            "proc_tick",
                                            "process",
                                            "process_tick",
                                            "rollup_day",
                                            "rollup_day_gpu",
                                            "rollup_day_identity",
                                            "rollup_gpu",
                                            "rollup_hour",
                                            "rollup_identity",
                                            "run",
                                            "tick_block"};
    EXPECT_EQ(names, expected);
}

TEST_F(Store, CreateMakesParentDirectories) {
    const std::string nested = m_dir.file("a/b/gua.db");
    Database db(nested, OpenMode::create);
    migrate(db);
    EXPECT_TRUE(std::filesystem::exists(nested));
}

TEST_F(Store, NewerSchemaIsRefused) {
    {
        RawDb raw(m_path);
        raw.exec("PRAGMA application_id = 1196769585; PRAGMA user_version = 99; "
                 "CREATE TABLE future (x INTEGER);");
    }
    Database db(m_path, OpenMode::read_write);
    try {
        migrate(db);
        FAIL() << "migrate accepted a schema from the future";
    } catch (const Fatal& e) {
        EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(m_path), std::string::npos) << e.what();
    }
    EXPECT_THROW(check_readable(db), Fatal);
    EXPECT_EQ(db.scalar("PRAGMA user_version"), 99);
}

TEST_F(Store, ForeignSqliteFileIsRefusedAndLeftAlone) {
    {
        RawDb raw(m_path);
        raw.exec(
            "CREATE TABLE samples (ts INTEGER, gpu INTEGER); INSERT INTO samples VALUES (1,2);");
    }
    try {
        Database db(m_path, OpenMode::read_write);
        migrate(db);
        FAIL() << "a foreign database was opened for writing";
    } catch (const Fatal& e) {
        EXPECT_NE(std::string(e.what()).find("not a gua database"), std::string::npos) << e.what();
    }
    {
        Database db(m_path, OpenMode::read_only);
        EXPECT_THROW(check_readable(db), Fatal);
    }
    RawDb raw(m_path);
    EXPECT_EQ(raw.one("SELECT count(*) FROM sqlite_schema"), "1");
    EXPECT_EQ(raw.one("PRAGMA user_version"), "0");
}

TEST_F(Store, ForeignApplicationIdIsRefused) {
    {
        RawDb raw(m_path);
        raw.exec("PRAGMA application_id = 1234;");
    }
    EXPECT_THROW(Database(m_path, OpenMode::read_write), Fatal);
}

TEST_F(Store, EmptyFileIsNotReadable) {
    Database db(m_path, OpenMode::create);
    try {
        check_readable(db);
        FAIL() << "an empty database was accepted for reading";
    } catch (const Fatal& e) {
        EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what();
    }
}

TEST_F(Store, MissingFileReadOnlyIsFatalNamingThePath) {
    const std::string missing = m_dir.file("nope/gua.db");
    for (OpenMode mode : {OpenMode::read_only, OpenMode::read_write}) {
        try {
            Database db(missing, mode);
            FAIL() << "opened a missing file";
        } catch (const Fatal& e) {
            EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
            EXPECT_EQ(e.code(), ExitCode::failure);
        }
    }
    EXPECT_FALSE(std::filesystem::exists(missing));
    EXPECT_FALSE(std::filesystem::exists(m_dir.file("nope")));
}

TEST_F(Store, WriterReaderRoundTrip) {
    Database db(m_path, OpenMode::create);
    migrate(db);
    const telemetry::Identity alice = person("alice", 1001, "python3");
    telemetry::Identity bob = person("bob", 1002, "ipykernel");
    bob.container_id = std::string(64, 'c');
    bob.pod_uid = "pod-1";
    bob.slurm_job = "42";
    bob.systemd_unit = "jupyter.service";
    bob.jupyter_kernel = "kernel-1";

    telemetry::CardTickRecord full = card(
        0, 12 * k_us_per_second,
        {process(1234, alice, 70000, 55.5), process(5678, bob, std::nullopt, std::nullopt,
                                                    telemetry::ProcessType::mps, std::nullopt)});
    full.readings.mem_util_pct = 33;
    full.readings.mem_used_mib = 70000;
    full.readings.power_mw = 312000;
    full.readings.temperature_c = 61;
    full.readings.sm_clock_mhz = 1410;
    full.readings.clock_events = 0x4;
    full.read_errors = 2;
    const telemetry::CardTickRecord empty = card(1, std::nullopt);

    Writer writer(db, run_info());
    writer.write(make_tick(k_t0, {full, empty}));
    writer.write(make_tick(
        k_t0 + k_dur, {card(0, 0, {process(1234, alice, 70000, 0.0)}), card(1, std::nullopt)}));
    writer.finish(k_t0 + 2 * k_dur);
    EXPECT_EQ(writer.card_rows(), 4U);

    Reader reader(db);
    const auto runs = reader.runs();
    ASSERT_EQ(runs.size(), 1U);
    EXPECT_EQ(runs[0].host, "testhost");
    EXPECT_EQ(runs[0].driver_version, "560.35.05");
    EXPECT_EQ(runs[0].source, "synthetic:test");
    EXPECT_EQ(runs[0].interval_us, k_dur);
    EXPECT_DOUBLE_EQ(runs[0].active_threshold_pct, 10.0);
    EXPECT_EQ(runs[0].started_us, k_t0);
    EXPECT_EQ(runs[0].ended_us, k_t0 + 2 * k_dur);
    EXPECT_FALSE(runs[0].gua_version.empty());

    const auto gpus = reader.gpus();
    ASSERT_EQ(gpus.size(), 2U);
    EXPECT_EQ(gpus[0].uuid, device(0).uuid);
    EXPECT_EQ(gpus[0].index, 0);
    EXPECT_EQ(gpus[0].name, "NVIDIA A100-SXM4-80GB");
    EXPECT_EQ(gpus[0].memory_total_mib, 81920);
    EXPECT_EQ(gpus[1].index, 1);

    const auto ids = reader.identities();
    ASSERT_EQ(ids.size(), 2U);
    std::map<std::string, IdentityRow> by_user;
    for (const IdentityRow& r : ids) {
        by_user[r.identity.user] = r;
    }
    EXPECT_EQ(by_user.at("alice").identity.uid, 1001U);
    telemetry::Identity bob_read = by_user.at("bob").identity;
    bob_read.command = bob.command; // the command lives on the process row
    EXPECT_EQ(bob_read, bob);

    // First tick start, last tick end.
    EXPECT_EQ(reader.span(), (std::pair<TimeUs, TimeUs>{k_t0, k_t0 + 2 * k_dur}));

    const auto ticks = scan_all(db);
    ASSERT_EQ(ticks.size(), 4U);
    const audit::CardTick& a = ticks[0];
    EXPECT_EQ(a.t0, k_t0);
    EXPECT_EQ(a.gpu, static_cast<std::uint32_t>(gpus[0].id));
    EXPECT_EQ(a.duration_us, k_dur);
    EXPECT_EQ(a.active_us, 12 * k_us_per_second);
    const std::array<DurationUs, 4> buckets{18 * k_us_per_second, 0, 0, 12 * k_us_per_second};
    EXPECT_EQ(a.bucket_us, buckets);
    ASSERT_TRUE(a.util_pct.has_value());
    EXPECT_DOUBLE_EQ(*a.util_pct, 40.0);
    ASSERT_EQ(a.processes.size(), 2U);
    std::map<std::uint32_t, audit::ProcTick> procs;
    for (const audit::ProcTick& p : a.processes) {
        procs[p.identity] = p;
    }
    const auto alice_id = static_cast<std::uint32_t>(by_user.at("alice").id);
    const auto bob_id = static_cast<std::uint32_t>(by_user.at("bob").id);
    EXPECT_EQ(procs.at(alice_id).mem_used_mib, 70000);
    EXPECT_EQ(procs.at(alice_id).sm_util_pct, 55.5);
    EXPECT_EQ(procs.at(alice_id).type, telemetry::ProcessType::compute);
    EXPECT_EQ(procs.at(bob_id).mem_used_mib, std::nullopt);
    EXPECT_EQ(procs.at(bob_id).sm_util_pct, std::nullopt);
    EXPECT_EQ(procs.at(bob_id).type, telemetry::ProcessType::mps);

    const audit::CardTick& b = ticks[1];
    EXPECT_EQ(b.gpu, static_cast<std::uint32_t>(gpus[1].id));
    EXPECT_EQ(b.active_us, std::nullopt);
    EXPECT_EQ(b.util_pct, std::nullopt);
    EXPECT_TRUE(b.processes.empty());
    EXPECT_EQ(ticks[2].t0, k_t0 + k_dur);
    ASSERT_EQ(ticks[2].processes.size(), 1U);
    EXPECT_EQ(ticks[2].processes[0].sm_util_pct, 0.0);

    // Columns the scan does not carry, straight from SQL.
    RawDb raw(m_path);
    const auto rows = raw.rows("SELECT * FROM card_tick WHERE t0_us = " + std::to_string(k_t0) +
                               " ORDER BY gpu_id");
    ASSERT_EQ(rows.size(), 2U);
    EXPECT_EQ(rows[0].at("mem_util_pct"), "33");
    EXPECT_EQ(rows[0].at("mem_used_mib"), "70000");
    EXPECT_EQ(rows[0].at("power_mw"), "312000");
    EXPECT_EQ(rows[0].at("temperature_c"), "61");
    EXPECT_EQ(rows[0].at("sm_clock_mhz"), "1410");
    EXPECT_EQ(rows[0].at("clock_events"), "4");
    EXPECT_EQ(rows[0].at("read_errors"), "2");
    EXPECT_EQ(rows[0].at("util_source"), "2");
    for (const char* col : {"util_pct", "active_us", "mem_util_pct", "mem_used_mib", "power_mw",
                            "temperature_c", "sm_clock_mhz", "clock_events"}) {
        EXPECT_EQ(rows[1].at(col), "NULL") << col;
    }
    EXPECT_EQ(rows[1].at("util_source"), "0");
    EXPECT_EQ(raw.one("SELECT start_ticks IS NULL FROM process WHERE pid = 5678"), "1");
    EXPECT_EQ(raw.one("SELECT start_ticks FROM process WHERE pid = 1234"), "1000");
    EXPECT_EQ(raw.one("SELECT command FROM process WHERE pid = 1234"), "python3");
}

TEST_F(Store, AWriterWhoseOpenBlockWasClosedByAnotherStartsANewOne) {
    // A second writer on the same file (gua import next to the daemon) closes open blocks of
    // other runs as orphans; the first writer's next tick must not be lost.
    Database db(m_path, OpenMode::create);
    migrate(db);
    Writer daemon_writer(db, run_info());
    daemon_writer.write(make_tick(k_t0, {card(0, k_dur)}));
    daemon_writer.write(make_tick(k_t0 + k_dur, {card(0, 0)}));
    Writer importer(db, run_info());
    daemon_writer.write(make_tick(k_t0 + 2 * k_dur, {card(0, k_dur)}));
    daemon_writer.write(make_tick(k_t0 + 3 * k_dur, {card(0, 0)}));
    const auto ticks = scan_all(db);
    ASSERT_EQ(ticks.size(), 4U);
    for (std::size_t k = 0; k < ticks.size(); ++k) {
        EXPECT_EQ(ticks[k].t0, k_t0 + static_cast<TimeUs>(k) * k_dur);
        EXPECT_EQ(ticks[k].active_us, k % 2 == 0 ? k_dur : 0);
    }
}

TEST_F(Store, DimensionRowsAreDeduplicatedAcrossTicks) {
    Database db(m_path, OpenMode::create);
    migrate(db);
    Writer writer(db, run_info());
    const telemetry::Identity alice = person("alice", 1001, "python3");
    const telemetry::Identity nobody = telemetry::unknown_identity();
    for (int i = 0; i < 5; ++i) {
        writer.write(make_tick(k_t0 + i * k_dur,
                               {card(0, 0, {process(1, alice, 100), process(2, nobody, 200)}),
                                card(1, 0, {process(3, alice, 300)})}));
    }
    RawDb raw(m_path);
    EXPECT_EQ(raw.one("SELECT count(*) FROM gpu"), "2");
    EXPECT_EQ(raw.one("SELECT count(*) FROM identity"), "2");
    EXPECT_EQ(raw.one("SELECT count(*) FROM process"), "3");
    EXPECT_EQ(raw.one("SELECT count(*) FROM card_tick"), "10");
    EXPECT_EQ(raw.one("SELECT count(*) FROM proc_tick"), "15");
}

TEST_F(Store, DimensionRowsAreDeduplicatedAcrossRuns) {
    // A restarted daemon (a new Writer) must find the rows its predecessor wrote, including those
    // with NULL columns: the unknown identity (no uid) and processes without a start time.
    Database db(m_path, OpenMode::create);
    migrate(db);
    const telemetry::Identity alice = person("alice", 1001, "python3");
    const telemetry::Identity nobody = telemetry::unknown_identity();
    for (int run = 0; run < 3; ++run) {
        Writer writer(db, run_info());
        writer.write(make_tick(
            k_t0 + run * k_dur,
            {card(0, 0,
                  {process(1, alice, 100),
                   process(2, nobody, 200, {}, telemetry::ProcessType::compute, std::nullopt)})}));
    }
    RawDb raw(m_path);
    EXPECT_EQ(raw.one("SELECT count(*) FROM run"), "3");
    EXPECT_EQ(raw.one("SELECT count(*) FROM gpu"), "1");
    EXPECT_EQ(raw.one("SELECT count(*) FROM identity WHERE user = 'alice'"), "1");
    EXPECT_EQ(raw.one("SELECT count(*) FROM process WHERE pid = 1"), "1");
    EXPECT_EQ(raw.one("SELECT count(*) FROM identity WHERE user = 'unknown'"), "1");
    EXPECT_EQ(raw.one("SELECT count(*) FROM process WHERE pid = 2"), "1");
}

TEST_F(Store, GpuRowFollowsChangedDeviceFacts) {
    Database db(m_path, OpenMode::create);
    migrate(db);
    Writer writer(db, run_info());
    writer.write(make_tick(k_t0, {card(0, 0)}));
    telemetry::CardTickRecord moved = card(0, 0);
    moved.device.index = 3; // same uuid, new driver index after a reboot
    writer.write(make_tick(k_t0 + k_dur, {moved}));
    RawDb raw(m_path);
    EXPECT_EQ(raw.one("SELECT count(*) FROM gpu"), "1");
    EXPECT_EQ(raw.one("SELECT idx FROM gpu"), "3");
}

TEST_F(Store, PidReuseWithNewStartTimeIsANewProcess) {
    Database db(m_path, OpenMode::create);
    migrate(db);
    Writer writer(db, run_info());
    const telemetry::Identity alice = person("alice", 1001, "python3");
    writer.write(make_tick(k_t0, {card(0, 0, {process(4242, alice, 1000, {}, {}, 100)})}));
    writer.write(make_tick(k_t0 + k_dur, {card(0, 0, {process(4242, alice, 2000, {}, {}, 900)})}));
    writer.write(
        make_tick(k_t0 + 2 * k_dur, {card(0, 0, {process(4242, alice, 2000, {}, {}, 900)})}));
    RawDb raw(m_path);
    const auto procs = raw.rows("SELECT id, start_ticks FROM process WHERE pid = 4242 ORDER BY "
                                "start_ticks");
    ASSERT_EQ(procs.size(), 2U);
    EXPECT_EQ(procs[0].at("start_ticks"), "100");
    EXPECT_EQ(procs[1].at("start_ticks"), "900");
    const auto ticks = raw.rows("SELECT t0_us, process_id FROM proc_tick ORDER BY t0_us");
    ASSERT_EQ(ticks.size(), 3U);
    EXPECT_EQ(ticks[0].at("process_id"), procs[0].at("id"));
    EXPECT_EQ(ticks[1].at("process_id"), procs[1].at("id"));
    EXPECT_EQ(ticks[2].at("process_id"), procs[1].at("id"));
    EXPECT_EQ(raw.one("SELECT count(*) FROM identity"), "1");
}

TEST_F(Store, CardTickStateViewForAdministrators) {
    Database db(m_path, OpenMode::create);
    migrate(db);
    Writer writer(db, run_info());
    const telemetry::Identity alice = person("alice", 1001, "python3");
    telemetry::CardTickRecord active = card(0, k_dur, {process(1, alice, 70000, 80.0)});
    active.readings.power_mw = 350000;
    active.readings.temperature_c = 68;
    active.readings.mem_used_mib = 70000;
    writer.write(make_tick(
        k_t0,
        {active, card(1, 0, {process(2, alice, 8000)}),
         card(2, 0,
              {process(3, person("root", 0, "Xorg"), 128, {}, telemetry::ProcessType::graphics)}),
         card(3, std::nullopt, {process(4, alice, 4000)}),
         card(4, 12 * k_us_per_second, {process(5, alice, 101)}),
         card(5, 0, {process(6, alice, 100)}),
         card(6, 0, {process(7, alice, std::nullopt, {}, telemetry::ProcessType::mps)})}));
    RawDb raw(m_path);
    const auto rows = raw.rows("SELECT * FROM card_tick_state ORDER BY gpu");
    ASSERT_EQ(rows.size(), 7U);
    const auto& r0 = rows[0];
    EXPECT_EQ(r0.at("start_utc"), "2026-01-05T10:00:00Z");
    EXPECT_EQ(r0.at("uuid"), device(0).uuid);
    EXPECT_EQ(r0.at("model"), "NVIDIA A100-SXM4-80GB");
    EXPECT_EQ(std::stod(r0.at("seconds")), 30.0);
    EXPECT_EQ(std::stod(r0.at("util_pct")), 100.0);
    EXPECT_EQ(r0.at("held_mib"), "70000");
    EXPECT_EQ(std::stod(r0.at("active_s")), 30.0);
    EXPECT_EQ(std::stod(r0.at("idle_held_s")), 0.0);
    EXPECT_EQ(std::stod(r0.at("truly_idle_s")), 0.0);
    EXPECT_EQ(r0.at("state"), "active");
    EXPECT_EQ(r0.at("mem_used_mib"), "70000");
    EXPECT_EQ(std::stod(r0.at("power_w")), 350.0);
    EXPECT_EQ(r0.at("temperature_c"), "68");

    EXPECT_EQ(rows[1].at("state"), "idle-held");
    EXPECT_EQ(std::stod(rows[1].at("idle_held_s")), 30.0);
    EXPECT_EQ(rows[2].at("state"), "truly-idle"); // Xorg only
    EXPECT_EQ(rows[2].at("held_mib"), "0");
    EXPECT_EQ(std::stod(rows[2].at("truly_idle_s")), 30.0);
    EXPECT_EQ(rows[3].at("state"), "n/a");
    EXPECT_EQ(rows[3].at("active_s"), "NULL");
    EXPECT_EQ(rows[3].at("idle_held_s"), "NULL");
    EXPECT_EQ(rows[3].at("truly_idle_s"), "NULL");
    EXPECT_EQ(rows[4].at("state"), "idle-held"); // 40 % active, 101 MiB held
    EXPECT_EQ(std::stod(rows[4].at("active_s")), 12.0);
    EXPECT_EQ(std::stod(rows[4].at("idle_held_s")), 18.0);
    EXPECT_EQ(std::stod(rows[4].at("truly_idle_s")), 0.0);
    EXPECT_EQ(rows[5].at("state"), "truly-idle"); // exactly 100 MiB is not held
    EXPECT_EQ(rows[6].at("state"), "idle-held");  // MPS with unknown memory holds
}

TEST_F(Store, ProcessTickView) {
    Database db(m_path, OpenMode::create);
    migrate(db);
    Writer writer(db, run_info());
    telemetry::Identity erin = person("erin", 1005, "python3");
    erin.jupyter_kernel = "4f1c2d3e";
    erin.slurm_job = "77";
    writer.write(make_tick(k_t0, {card(1, 0,
                                       {process(3001, erin, 38000, 2.5),
                                        process(1100, person("root", 0, "Xorg"), 128, {},
                                                telemetry::ProcessType::graphics),
                                        process(77, person("svc", 999, "nvidia-cuda-mps"),
                                                std::nullopt, {}, telemetry::ProcessType::mps)})}));
    RawDb raw(m_path);
    const auto rows = raw.rows("SELECT * FROM process_tick ORDER BY pid");
    ASSERT_EQ(rows.size(), 3U);
    EXPECT_EQ(rows[0].at("pid"), "77");
    EXPECT_EQ(rows[0].at("type"), "mps");
    EXPECT_EQ(rows[0].at("mem_used_mib"), "NULL");
    EXPECT_EQ(rows[1].at("pid"), "1100");
    EXPECT_EQ(rows[1].at("type"), "graphics");
    EXPECT_EQ(rows[1].at("user"), "root");
    EXPECT_EQ(rows[1].at("command"), "Xorg");
    const auto& e = rows[2];
    EXPECT_EQ(e.at("start_utc"), "2026-01-05T10:00:00Z");
    EXPECT_EQ(e.at("gpu"), "1");
    EXPECT_EQ(e.at("uuid"), device(1).uuid);
    EXPECT_EQ(e.at("user"), "erin");
    EXPECT_EQ(e.at("command"), "python3");
    EXPECT_EQ(e.at("type"), "compute");
    EXPECT_EQ(e.at("mem_used_mib"), "38000");
    EXPECT_EQ(std::stod(e.at("sm_util_pct")), 2.5);
    EXPECT_EQ(e.at("jupyter_kernel"), "4f1c2d3e");
    EXPECT_EQ(e.at("slurm_job"), "77");
    EXPECT_EQ(e.at("container_id"), "");
}

TEST_F(Store, ScanMergesProcessesAcrossGpusAndDays) {
    Database db(m_path, OpenMode::create);
    migrate(db);
    Writer writer(db, run_info());
    // Ticks just before and after midnight, then one two days later; GPU 1 never has a
    // process, GPU 0 and 2 have distinct pids whose memory encodes (tick, gpu).
    const TimeUs midnight = 1767657600LL * k_us_per_second; // 2026-01-06T00:00:00Z
    const std::vector<TimeUs> starts{midnight - 2 * k_dur, midnight - k_dur, midnight,
                                     midnight + k_dur, midnight + 2 * k_us_per_day + 5};
    const telemetry::Identity alice = person("alice", 1001, "python3");
    for (std::size_t i = 0; i < starts.size(); ++i) {
        const auto n = static_cast<std::int64_t>(i);
        std::vector<telemetry::CardTickRecord> cards{
            card(0, 0, {process(100, alice, 1000 + n)}), card(1, 0),
            card(2, 0, {process(200, alice, 2000 + n), process(201, alice, 3000 + n)})};
        if (i == 2) {
            cards.erase(cards.begin()); // GPU 0 missing from one tick
        }
        writer.write(make_tick(starts[i], cards));
    }
    const auto ticks = scan_all(db, midnight - k_us_per_day);
    ASSERT_EQ(ticks.size(), 14U);
    Reader reader(db);
    std::map<std::int64_t, int> index_of;
    for (const GpuRow& g : reader.gpus()) {
        index_of[g.id] = g.index;
    }
    std::size_t k = 0;
    for (std::size_t i = 0; i < starts.size(); ++i) {
        const auto n = static_cast<std::int64_t>(i);
        for (int gpu = (i == 2 ? 1 : 0); gpu < 3; ++gpu, ++k) {
            const audit::CardTick& t = ticks.at(k);
            EXPECT_EQ(t.t0, starts[i]);
            EXPECT_EQ(index_of.at(t.gpu), gpu);
            std::vector<std::int64_t> mem;
            for (const audit::ProcTick& p : t.processes) {
                mem.push_back(p.mem_used_mib.value_or(-1));
            }
            std::sort(mem.begin(), mem.end());
            if (gpu == 0) {
                EXPECT_EQ(mem, (std::vector<std::int64_t>{1000 + n})) << i;
            } else if (gpu == 1) {
                EXPECT_TRUE(mem.empty()) << i;
            } else {
                EXPECT_EQ(mem, (std::vector<std::int64_t>{2000 + n, 3000 + n})) << i;
            }
        }
    }
    // The window is half-open: [from, to).
    EXPECT_EQ(scan_all(db, midnight, midnight + k_dur).size(), 2U);
    EXPECT_EQ(scan_all(db, midnight + k_dur, midnight + k_dur + 1).size(), 3U);
    EXPECT_TRUE(scan_all(db, midnight + 3 * k_us_per_day, midnight + 4 * k_us_per_day).empty());
}

TEST_F(Store, ScanOfAnEmptyDatabaseCallsNothing) {
    Database db(m_path, OpenMode::create);
    migrate(db);
    EXPECT_TRUE(scan_all(db).empty());
    EXPECT_EQ(Reader(db).span(), std::nullopt);
}

} // namespace store_test
} // namespace gua::store
