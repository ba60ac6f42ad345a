// SPDX-License-Identifier: Apache-2.0
// daemon::DatabaseLock and ops::database_lock_holder/database_alerts: the lock is on the database
// file itself, so every path to the file meets it (OFD locks conflict between open file
// descriptions even within one process), it outlives SQLite's own descriptors of the file, and it
// tells when the file left its path.
#include "core/fatal.hpp"
#include "daemon/lock.hpp"
#include "ops/lock_holder.hpp"
#include "store/database.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace gua::daemon {
namespace {

namespace fs = std::filesystem;

/// The exit code and message of the Fatal that locking `path` throws; {ok, ""} when it locks.
std::pair<ExitCode, std::string> try_lock(const std::string& path) {
    try {
        const DatabaseLock lock(path);
        return {ExitCode::ok, ""};
    } catch (const Fatal& e) {
        return {e.code(), e.what()};
    }
}

TEST(DatabaseLock, EveryPathToTheFileMeetsTheLock) {
    test::TempDir dir;
    const std::string db = dir.file("gua.db");
    const DatabaseLock held(db);
    fs::create_symlink(db, dir.file("symlink.db"));
    fs::create_hard_link(db, dir.file("hardlink.db"));
    const std::string me = std::to_string(::getpid());
    for (const std::string& path :
         {db, dir.file("symlink.db"), dir.file("hardlink.db"), dir.file("./gua.db")}) {
        EXPECT_EQ(try_lock(path),
                  std::make_pair(ExitCode::conflict, "another gua daemon (pid " + me +
                                                         ") is already recording to " + path))
            << path;
        EXPECT_EQ(ops::database_lock_holder(path), ::getpid()) << path;
    }
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator{}), 3)
        << "no side file: the database and its two links";
}

TEST(DatabaseLock, ReleasedWithTheObjectAndKeptWhileSqliteOpensAndClosesTheFile) {
    test::TempDir dir;
    const std::string db = dir.file("gua.db");
    {
        const DatabaseLock held(db);
        {
            store::Database a(db, store::OpenMode::create);
            a.exec("CREATE TABLE t(x); INSERT INTO t VALUES (1)");
            store::Database b(db, store::OpenMode::read_only);
            EXPECT_EQ(b.scalar("SELECT x FROM t"), 1);
        } // SQLite closes its descriptors of the file
        EXPECT_EQ(ops::database_lock_holder(db), ::getpid());
        EXPECT_EQ(try_lock(db).first, ExitCode::conflict);
    }
    EXPECT_FALSE(ops::database_lock_holder(db));
    EXPECT_EQ(try_lock(db).first, ExitCode::ok);
}

TEST(DatabaseLock, MissingFileIsCreatedOrRefused) {
    test::TempDir dir;
    const std::string missing = dir.file("sub/none.db");
    EXPECT_THROW(DatabaseLock(missing, IfMissing::fail), Fatal);
    EXPECT_FALSE(fs::exists(missing));
    {
        const DatabaseLock created(missing);
        EXPECT_EQ(fs::file_size(missing), 0u);
    }
    EXPECT_FALSE(ops::database_lock_holder(dir.file("nothing.db")));
}

TEST(DatabaseLock, AlertsArePublishedAndWithdrawn) {
    test::TempDir dir;
    const std::string db = dir.file("gua.db");
    EXPECT_TRUE(ops::database_alerts(db).empty());
    {
        DatabaseLock held(db);
        EXPECT_TRUE(ops::database_alerts(db).empty());
        held.set_alert(ops::DaemonAlert::no_gpus, true);
        held.set_alert(ops::DaemonAlert::writes_failing, true);
        held.set_alert(ops::DaemonAlert::writes_failing, true);
        fs::create_symlink(db, dir.file("link.db"));
        EXPECT_EQ(ops::database_alerts(dir.file("link.db")),
                  (std::vector<ops::DaemonAlert>{ops::DaemonAlert::writes_failing,
                                                 ops::DaemonAlert::no_gpus}));
        held.set_alert(ops::DaemonAlert::writes_failing, false);
        EXPECT_EQ(ops::database_alerts(db),
                  std::vector<ops::DaemonAlert>{ops::DaemonAlert::no_gpus});
        EXPECT_EQ(ops::database_lock_holder(db), ::getpid()) << "alerts leave the owner alone";
    }
    EXPECT_TRUE(ops::database_alerts(db).empty());
}

TEST(DatabaseLock, TellsWhenTheFileLeftItsPath) {
    test::TempDir dir;
    const std::string db = dir.file("gua.db");
    {
        const DatabaseLock held(db);
        EXPECT_EQ(held.file_gone(), std::nullopt);
        fs::rename(db, dir.file("moved.db"));
        EXPECT_EQ(held.file_gone(), "database " + db +
                                        " was moved or deleted (No such file or "
                                        "directory)");
        std::ofstream(db).close();
        EXPECT_EQ(held.file_gone(), "database " + db + " was replaced by another file");
        fs::remove(dir.file("moved.db"));
        EXPECT_EQ(held.file_gone(), "database " + db + " was replaced by another file");
        fs::remove(db);
        EXPECT_EQ(held.file_gone(), "database " + db + " was deleted");
    }
}

} // namespace
} // namespace gua::daemon
