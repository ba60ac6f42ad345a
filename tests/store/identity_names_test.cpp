// SPDX-License-Identifier: Apache-2.0
// Schema 10: the names the node gives an identity's pod and container. A schema 9 file upgrades
// without loss; the writer fills names in on the identity's row (found later, or renamed) and
// never blanks them; the reader, the recent-state reader and process_tick show them.
#include "store/reader.hpp"
#include "store/recent.hpp"
#include "store/writer.hpp"
#include "support/raw_db.hpp"
#include "temp_db.hpp"

#include <gtest/gtest.h>

namespace gua::store {
namespace identity_names_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1777593600LL * k_us_per_second;
const std::string k_pod = "0c1d2e3f-4a5b-4c6d-8e7f-0123456789ab";

/// One 30 s tick at `k` × 30 s of one card held by one process of `identity`.
telemetry::Tick tick_of(int k, const telemetry::Identity& identity) {
    telemetry::Tick t;
    t.t0 = k_start + k * 30 * k_us_per_second;
    t.duration_us = 30 * k_us_per_second;
    telemetry::CardTickRecord c;
    c.device = telemetry::DeviceInfo{"GPU-a", 0, "H100", 81920, "", ""};
    c.util_source = telemetry::UtilSource::snapshot;
    c.util_pct = 0;
    c.active_us = 0;
    c.bucket_us = {30 * k_us_per_second, 0, 0, 0};
    telemetry::ProcessTick p;
    p.pid = 42;
    p.start_ticks = 7;
    p.identity = identity;
    p.mem_used_mib = 4000;
    c.processes.push_back(p);
    t.cards.push_back(c);
    return t;
}

telemetry::Identity in_pod() {
    telemetry::Identity i;
    i.user = "root";
    i.uid = 0;
    i.command = "python3";
    i.pod_uid = k_pod;
    i.container_id = std::string(64, 'c');
    return i;
}

TEST(IdentityNames, SchemaNineFileUpgradesWithoutLoss) {
    testing::TempDir dir;
    const std::string path = dir.file("v9.db");
    {
        Database db(path, OpenMode::create);
        migrate_to(db, 9);
        db.exec("INSERT INTO identity (user, uid, container_id, pod_uid) VALUES ('root', 0, '" +
                std::string(64, 'c') + "', '" + k_pod + "'), ('alice', 1000, '', '')");
    }
    Database db(path, OpenMode::read_write);
    migrate(db);
    EXPECT_EQ(db.scalar("PRAGMA user_version"), k_schema_version);
    test::RawDb raw(path);
    EXPECT_EQ(raw.one("SELECT group_concat(id || ':' || user || ':' || pod_uid || ':[' || "
                      "pod_namespace || pod_name || container_name || ']', ',') FROM identity"),
              "1:root:" + k_pod + ":[],2:alice::[]");
    // The writer finds the upgraded row for the same identity, now with names: it fills them in.
    telemetry::Identity named = in_pod();
    named.pod_namespace = "ml";
    named.pod_name = "train-0";
    named.container_name = "trainer";
    {
        Writer w(db, RunInfo{"h", "d", "nvml", 30 * k_us_per_second, 10.0, k_start});
        w.write(tick_of(0, named));
        w.finish(k_start + 30 * k_us_per_second);
    }
    EXPECT_EQ(raw.one("SELECT count(*) FROM identity"), "2");
    EXPECT_EQ(raw.one("SELECT pod_namespace || '/' || pod_name || '/' || container_name FROM "
                      "identity WHERE id = 1"),
              "ml/train-0/trainer");
    EXPECT_EQ(raw.one("SELECT DISTINCT pod_namespace || '/' || pod_name || '/' || container_name "
                      "FROM process_tick"),
              "ml/train-0/trainer");
}

TEST(IdentityNames, ANameFoundLaterFillsTheRowAndIsNeverBlanked) {
    testing::TempDb t;
    const telemetry::Identity bare = in_pod();
    telemetry::Identity named = bare;
    named.pod_namespace = "ml";
    named.pod_name = "train-0";
    named.container_name = "trainer";
    telemetry::Identity renamed = named;
    renamed.container_name = "trainer-2";
    {
        Writer w(t.db, RunInfo{"h", "d", "nvml", 30 * k_us_per_second, 10.0, k_start});
        w.write(tick_of(0, bare));  // names not found yet
        w.write(tick_of(1, named)); // found
        w.write(tick_of(2, bare));  // a daemon that cannot read them (restarted elsewhere)
        w.finish(k_start + 90 * k_us_per_second);
    }
    EXPECT_EQ(t.db.scalar("SELECT count(*) FROM identity"), 1);
    const std::vector<IdentityRow> rows = Reader(t.db).identities();
    ASSERT_EQ(rows.size(), 1U);
    EXPECT_EQ(rows[0].identity.pod_namespace, "ml");
    EXPECT_EQ(rows[0].identity.pod_name, "train-0");
    EXPECT_EQ(rows[0].identity.container_name, "trainer");
    {
        Writer w(t.db, RunInfo{"h", "d", "nvml", 30 * k_us_per_second, 10.0, k_start});
        w.write(tick_of(3, renamed)); // `docker rename`: the newest name wins
        w.finish(k_start + 120 * k_us_per_second);
    }
    EXPECT_EQ(t.db.scalar("SELECT count(*) FROM identity"), 1);
    EXPECT_EQ(Reader(t.db).identities()[0].identity.container_name, "trainer-2");
    const RecentState recent = read_recent(t.db);
    ASSERT_FALSE(recent.cards.empty());
    ASSERT_EQ(recent.cards[0].record.processes.size(), 1U);
    EXPECT_EQ(recent.cards[0].record.processes[0].identity.pod_name, "train-0");
    EXPECT_EQ(recent.cards[0].record.processes[0].identity.container_name, "trainer-2");
}

} // namespace identity_names_test
} // namespace gua::store
