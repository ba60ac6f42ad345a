// SPDX-License-Identifier: Apache-2.0
// daemon::StorageWatch: counts what was stored and what was not, and logs a failure streak once
// (again only when its cause changes) and its end, with the alert raised exactly meanwhile.
#include "daemon/storage_watch.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace gua::daemon {
namespace {

TEST(StorageWatch, CountsStoredAndNotStoredAndLogsEachChangeOnce) {
    test::TempDir dir;
    const std::string db = dir.file("gua.db");
    DatabaseLock lock(db);
    std::vector<std::string> lines;
    StorageWatch watch(lock, [&](const std::string& line) { lines.push_back(line); });
    ASSERT_TRUE(watch.database_present(0));
    watch.stored(2);
    watch.failed(1, "database or disk is full");
    watch.failed(2, "database or disk is full");
    EXPECT_EQ(ops::database_alerts(db),
              std::vector<ops::DaemonAlert>{ops::DaemonAlert::writes_failing});
    watch.failed(3, "database is locked");
    watch.stored(2);
    EXPECT_TRUE(ops::database_alerts(db).empty());
    EXPECT_EQ(watch.stored_card_ticks(), 4u);
    EXPECT_EQ(watch.write_errors(), 3u);
    EXPECT_EQ(lines, (std::vector<std::string>{
                         "ERROR: tick 1 not stored: database or disk is full; ticks are lost until "
                         "writes succeed again (gua_write_errors_total counts them)",
                         "ERROR: tick 3 not stored: database is locked; ticks are lost until "
                         "writes succeed again (gua_write_errors_total counts them)",
                         "writes succeed again; 3 ticks were not stored"}));
    EXPECT_EQ(watch.gone(), std::nullopt);

    std::filesystem::remove(db);
    EXPECT_FALSE(watch.database_present(4));
    EXPECT_FALSE(watch.database_present(5));
    EXPECT_EQ(watch.write_errors(), 5u);
    EXPECT_EQ(watch.gone(), "database " + db + " was deleted");
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_EQ(lines[3], "ERROR: database " + db +
                            " was deleted while the daemon was recording: tick 4 and later ones "
                            "cannot be stored there; stopping (the 4 card-ticks stored since start "
                            "are in the old file, readable only while it still has a name); start "
                            "gua again to record into a new database");
}

} // namespace
} // namespace gua::daemon
