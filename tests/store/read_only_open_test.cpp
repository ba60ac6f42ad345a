// SPDX-License-Identifier: Apache-2.0
// Database in read-only mode: a stopped database (no -wal) is read immutable and gets no side
// files, whatever characters its path holds; a database with a -wal is read through it.
#include "store/database.hpp"
#include "support/raw_db.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace gua::store {
namespace read_only_open_test { // named after the file: unique in a unity batch

TEST(StoreReadOnlyOpen, AStoppedDatabaseIsReadImmutableWithoutSideFiles) {
    test::TempDir dir;
    for (const std::string name : {"plain.db", "odd ?name#with%25.db"}) {
        const std::string path = dir.file(name);
        {
            test::RawDb raw(path);
            raw.exec("PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES (7)");
        }
        ASSERT_FALSE(std::filesystem::exists(path + "-wal")) << "closed cleanly";
        {
            Database db(path, OpenMode::read_only);
            EXPECT_TRUE(db.immutable()) << name;
            EXPECT_EQ(db.scalar("SELECT x FROM t"), 7) << name;
        }
        EXPECT_FALSE(std::filesystem::exists(path + "-wal")) << name;
        EXPECT_FALSE(std::filesystem::exists(path + "-shm")) << name;
    }
}

TEST(StoreReadOnlyOpen, ADatabaseBeingWrittenIsReadThroughItsWal) {
    test::TempDir dir;
    const std::string path = dir.file("live.db");
    test::RawDb writer(path);
    writer.exec("PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES (1)");
    writer.exec("INSERT INTO t VALUES (2)"); // only in the WAL so far
    ASSERT_TRUE(std::filesystem::exists(path + "-wal"));
    Database db(path, OpenMode::read_only);
    EXPECT_FALSE(db.immutable());
    EXPECT_EQ(db.scalar("SELECT sum(x) FROM t"), 3);
    writer.exec("INSERT INTO t VALUES (4)");
    EXPECT_EQ(db.scalar("SELECT sum(x) FROM t"), 7) << "later commits are seen";
}

} // namespace read_only_open_test
} // namespace gua::store
