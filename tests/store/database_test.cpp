// SPDX-License-Identifier: Apache-2.0
// The sqlite3 wrapper and file identification: a foreign file is refused before anything in it
// changes (journal mode, header, -wal files) and without leaking its handle; bind errors are
// caught; probe_file tells every kind of path apart without writing.
#include "core/fatal.hpp"
#include "store/database.hpp"
#include "store/file_kind.hpp"
#include "store/schema.hpp"
#include "support/raw_db.hpp"
#include "temp_db.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace gua::store {
namespace {

std::string header_of(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string bytes(100, '\0');
    in.read(bytes.data(), 100);
    return bytes;
}

/// Descriptors of this process open on `path`.
int open_descriptors(const std::string& path) {
    int n = 0;
    const std::filesystem::path target = std::filesystem::canonical(path);
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
        std::error_code ec;
        if (std::filesystem::read_symlink(e.path(), ec) == target) {
            ++n;
        }
    }
    return n;
}

TEST(Database, ForeignFileIsRefusedBeforeAnythingChanges) {
    testing::TempDir dir;
    const std::string path = dir.file("other.db");
    {
        test::RawDb raw(path);
        raw.exec("CREATE TABLE samples (ts INTEGER); INSERT INTO samples VALUES (1);");
    }
    const std::string before = header_of(path);
    ASSERT_EQ(before[18], 1) << "a rollback-journal file to begin with";
    for (OpenMode mode : {OpenMode::read_write, OpenMode::create}) {
        try {
            Database db(path, mode);
            FAIL() << "opened a foreign file for writing";
        } catch (const Fatal& e) {
            EXPECT_NE(std::string(e.what()).find("not a gua database"), std::string::npos)
                << e.what();
        }
        EXPECT_EQ(open_descriptors(path), 0) << "the handle is closed when the constructor throws";
    }
    EXPECT_EQ(header_of(path), before) << "journal mode and header unchanged";
    EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
    EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
    Database reader(path, OpenMode::read_only);
    try {
        check_readable(reader);
        FAIL() << "a foreign file was accepted for reading";
    } catch (const Fatal& e) {
        EXPECT_NE(std::string(e.what()).find("not a gua database"), std::string::npos) << e.what();
    }
}

TEST(Database, AnotherApplicationIdIsRefusedEvenWithoutTables) {
    testing::TempDir dir;
    const std::string path = dir.file("other.db");
    {
        test::RawDb raw(path);
        raw.exec("PRAGMA application_id = 1234;");
    }
    EXPECT_THROW(Database(path, OpenMode::read_write), Fatal);
    EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST(Database, BindErrorsAreFatal) {
    testing::TempDb t;
    Statement st = t.db.prepare("SELECT ?1");
    EXPECT_THROW(st.bind(2, std::int64_t{1}), Fatal) << "no parameter 2";
    EXPECT_THROW(st.bind_null(0), Fatal);
    st.bind(1, std::int64_t{5});
    ASSERT_TRUE(st.step());
    EXPECT_EQ(st.int64(0), 5);
}

TEST(FileProbe, TellsEveryKindApartWithoutWriting) {
    testing::TempDir dir;
    EXPECT_EQ(probe_file(dir.file("none.db")).kind, FileKind::missing);
    EXPECT_NE(probe_file(dir.file("none.db")).message.find("none.db"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(dir.file("none.db")));
    std::ofstream(dir.file("zero.db")).close();
    EXPECT_EQ(probe_file(dir.file("zero.db")).kind, FileKind::empty);
    std::ofstream(dir.file("text.db")) << "just some text, long enough to be more than a header\n";
    EXPECT_EQ(probe_file(dir.file("text.db")).kind, FileKind::foreign);
    {
        test::RawDb raw(dir.file("other.db"));
        raw.exec("CREATE TABLE t (x);");
    }
    const FileProbe other = probe_file(dir.file("other.db"));
    EXPECT_EQ(other.kind, FileKind::foreign);
    EXPECT_NE(other.message.find("not a gua database"), std::string::npos) << other.message;
    {
        Database db(dir.file("gua.db"), OpenMode::create);
        migrate(db);
    }
    const FileProbe gua = probe_file(dir.file("gua.db"));
    EXPECT_EQ(gua.kind, FileKind::gua);
    EXPECT_EQ(gua.schema_version, k_schema_version);
    EXPECT_FALSE(std::filesystem::exists(dir.file("other.db-wal")));
}

} // namespace
} // namespace gua::store
