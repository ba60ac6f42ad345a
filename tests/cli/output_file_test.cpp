// SPDX-License-Identifier: Apache-2.0
// --output never destroys what is at the path: only regular files are replaced (keeping their
// mode), SQLite's files and special files are refused, and standard output works for everyone.
#include "cli/output_file.hpp"
#include "core/fatal.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

namespace gua::cli {
namespace output_file_test {

void write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

mode_t mode_of(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_mode;
}

/// The refusal `write_user_file` gives for `path`; fails the test when it writes instead.
std::string refusal(const std::string& path) {
    try {
        write_user_file("--output", path, "report\n");
    } catch (const Fatal& e) {
        EXPECT_EQ(e.code(), ExitCode::usage) << e.what();
        return e.what();
    }
    ADD_FAILURE() << path << " was written";
    return {};
}

/// No temporary file is left in `dir`.
void expect_only(const std::string& dir, std::size_t entries) {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) {
        ++n;
    }
    EXPECT_EQ(n, entries) << dir;
}

/// A demo database shared by the tests that run the real binary.
class OutputBinary : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        s_dir = std::make_unique<test::TempDir>();
        ::chmod(s_dir->path().c_str(), 0755);
        const test::RunResult r =
            test::run_gua({"demo", "--db", db(), "--quiet", "--format", "json"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    static void TearDownTestSuite() { s_dir.reset(); }
    static std::string db() { return s_dir->file("demo.db"); }
    static test::RunResult report(const std::string& output) {
        return test::run_gua({"report", "--db", db(), "--since", "30d", "--output", output});
    }
    static std::unique_ptr<test::TempDir> s_dir;
};
std::unique_ptr<test::TempDir> OutputBinary::s_dir;

TEST(OutputFile, ANewFileGetsTheUmaskMode) {
    const test::TempDir dir;
    const mode_t old = ::umask(027);
    write_user_file("--output", dir.file("r.txt"), "report\n");
    ::umask(old);
    EXPECT_EQ(test::read_text(dir.file("r.txt")), "report\n");
    EXPECT_EQ(mode_of(dir.file("r.txt")) & 07777, 0640U);
    expect_only(dir.path(), 1);
}

TEST(OutputFile, ARegularFileIsReplacedKeepingItsMode) {
    const test::TempDir dir;
    write(dir.file("r.txt"), "an older and longer report\n");
    ::chmod(dir.file("r.txt").c_str(), 0600);
    write_user_file("--output", dir.file("r.txt"), "report\n");
    EXPECT_EQ(test::read_text(dir.file("r.txt")), "report\n");
    EXPECT_EQ(mode_of(dir.file("r.txt")) & 07777, 0600U);
    expect_only(dir.path(), 1);
}

TEST(OutputFile, RootKeepsTheOwnerOfAFile) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root to give a file away";
    }
    const test::TempDir dir;
    write(dir.file("r.txt"), "old\n");
    ASSERT_EQ(::chown(dir.file("r.txt").c_str(), 65534, 65534), 0);
    write_user_file("--output", dir.file("r.txt"), "report\n");
    struct stat st {};
    ASSERT_EQ(::stat(dir.file("r.txt").c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 65534U);
    EXPECT_EQ(st.st_gid, 65534U);
}

TEST(OutputFile, SymlinksFifosDirectoriesSocketsAndDevicesAreRefused) {
    const test::TempDir dir;
    write(dir.file("target"), "precious\n");
    std::filesystem::create_symlink(dir.file("target"), dir.file("link"));
    EXPECT_NE(refusal(dir.file("link")).find("it is a symbolic link"), std::string::npos);
    EXPECT_TRUE(S_ISLNK(mode_of(dir.file("link"))));
    EXPECT_EQ(test::read_text(dir.file("target")), "precious\n");

    ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
    EXPECT_NE(refusal(dir.file("fifo")).find("it is a FIFO"), std::string::npos);
    EXPECT_TRUE(S_ISFIFO(mode_of(dir.file("fifo"))));

    EXPECT_NE(refusal(dir.path()).find("it is a directory"), std::string::npos);

    const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string sock = dir.file("sock");
    ASSERT_LT(sock.size(), sizeof(addr.sun_path));
    sock.copy(addr.sun_path, sock.size());
    ASSERT_EQ(::bind(s, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_NE(refusal(sock).find("it is a socket"), std::string::npos);
    ::close(s);

    EXPECT_NE(refusal("/dev/full").find("it is a device node"), std::string::npos);
    EXPECT_TRUE(S_ISCHR(mode_of("/dev/full")));
    expect_only(dir.path(), 4);
}

TEST(OutputFile, SqliteFilesAreRefusedByContentAndName) {
    const test::TempDir dir;
    const std::string db = dir.file("any.sqlite");
    write(db, std::string("SQLite format 3\0 and pages", 26));
    EXPECT_NE(refusal(db).find("is an SQLite database"), std::string::npos);
    // The companions of a database, present or not.
    EXPECT_NE(refusal(db + "-wal").find("belongs to the SQLite database"), std::string::npos);
    write(db + "-shm", "");
    EXPECT_NE(refusal(db + "-shm").find("belongs to the SQLite database"), std::string::npos);
    EXPECT_NE(refusal(db + "-journal").find("belongs to the SQLite database"), std::string::npos);
    // A WAL or journal found elsewhere, by its magic number.
    write(dir.file("log"), std::string("\x37\x7f\x06\x82rest", 8));
    EXPECT_NE(refusal(dir.file("log")).find("write-ahead log"), std::string::npos);
    write(dir.file("j"), std::string("\xd9\xd5\x05\xf9\x20\xa1\x63\xd7", 8));
    EXPECT_NE(refusal(dir.file("j")).find("rollback journal"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(db + "-wal"));
    expect_only(dir.path(), 4);
}

TEST(OutputFile, AFileTheUserMayNotWriteIsLeftAlone) {
    if (::geteuid() == 0) {
        GTEST_SKIP() << "root may write any file";
    }
    const test::TempDir dir;
    write(dir.file("r.txt"), "read-only\n");
    ::chmod(dir.file("r.txt").c_str(), 0444);
    EXPECT_THROW(write_user_file("--output", dir.file("r.txt"), "x"), Fatal);
    EXPECT_EQ(test::read_text(dir.file("r.txt")), "read-only\n");
}

TEST_F(OutputBinary, TheDatabaseItselfIsRefusedAndStaysIntact) {
    const test::RunResult r = report(db());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "gua: --output " + db() + ": refused: the file is an SQLite database\n");
    const test::RunResult wal = report(db() + "-wal");
    EXPECT_EQ(wal.exit_code, 2) << wal.err;
    const test::RunResult check = test::run_gua({"db", "check", "--db", db()});
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

TEST_F(OutputBinary, ASymlinkStaysASymlink) {
    const test::TempDir dir;
    write(dir.file("target"), "precious\n");
    std::filesystem::create_symlink(dir.file("target"), dir.file("link"));
    const test::RunResult r = report(dir.file("link"));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(S_ISLNK(mode_of(dir.file("link"))));
    EXPECT_EQ(test::read_text(dir.file("target")), "precious\n");
}

TEST_F(OutputBinary, AFifoStaysAFifo) {
    const test::TempDir dir;
    ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
    const test::RunResult r = report(dir.file("fifo"));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(S_ISFIFO(mode_of(dir.file("fifo"))));
}

TEST_F(OutputBinary, APrivateFileStaysPrivate) {
    const test::TempDir dir;
    write(dir.file("r.txt"), "old\n");
    ::chmod(dir.file("r.txt").c_str(), 0600);
    const test::RunResult r = report(dir.file("r.txt"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(test::read_text(dir.file("r.txt")).find("GPU"), std::string::npos);
    EXPECT_EQ(mode_of(dir.file("r.txt")) & 07777, 0600U);
}

TEST_F(OutputBinary, StandardOutputWorksForEveryone) {
    // The CSV table has no clock in it: the same bytes whichever way it is written.
    const std::vector<std::string> csv{"report",   "--db", db(),      "--since", "30d",
                                       "--format", "csv",  "--table", "gpus",    "--output"};
    const auto with = [](std::vector<std::string> args, const std::string& last) {
        args.push_back(last);
        return args;
    };
    const test::RunResult dash = test::run_gua(with(csv, "-"));
    ASSERT_EQ(dash.exit_code, 0) << dash.err;
    EXPECT_NE(dash.out.find("GPU-0a7c3e1f"), std::string::npos) << dash.out;
    const test::RunResult dev = test::run_gua(with(csv, "/dev/stdout"));
    ASSERT_EQ(dev.exit_code, 0) << dev.err;
    EXPECT_EQ(dev.out, dash.out);
    if (::geteuid() != 0 || !std::filesystem::exists("/usr/bin/setpriv")) {
        return;
    }
    // An unprivileged user cannot create files in /dev: the report goes to the pipe directly.
    std::vector<std::string> as_nobody{"--reuid=65534", "--regid=65534", "--clear-groups",
                                       GUA_BINARY};
    as_nobody.insert(as_nobody.end(), csv.begin(), csv.end());
    as_nobody.push_back("/dev/stdout");
    const test::RunResult nobody =
        test::run("/usr/bin/setpriv", as_nobody,
                  {{"NO_COLOR", "1"}, {"HOME", s_dir->path()}, {"XDG_CONFIG_HOME", ""}});
    ASSERT_EQ(nobody.exit_code, 0) << nobody.err;
    EXPECT_EQ(nobody.out, dash.out);
}

} // namespace output_file_test
} // namespace gua::cli
