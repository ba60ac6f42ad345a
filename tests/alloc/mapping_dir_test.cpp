// SPDX-License-Identifier: Apache-2.0
// The job-mapping directory: names, contents, owner sidecars, hostile files, and the watched
// source's edges timed within a second.
#include "alloc/mapping_dir.hpp"
#include "alloc/mapping_source.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace gua::alloc {
namespace mapping_dir_test {

void write_file(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::trunc) << text;
}

DeviceRef ref(unsigned index, std::optional<unsigned> gi = std::nullopt) {
    DeviceRef device;
    device.index = index;
    device.gpu_instance = gi;
    return device;
}

TEST(AllocMappingDir, FileNames) {
    EXPECT_EQ(parse_mapping_name("0"), ref(0));
    EXPECT_EQ(parse_mapping_name("13"), ref(13));
    EXPECT_EQ(parse_mapping_name("2.0"), ref(2, 0));
    EXPECT_EQ(parse_mapping_name("7.14"), ref(7, 14));
    for (const char* bad : {"", ".", "..", "a", "1a", "-1", "1.", ".1", "1.2.3", "12345",
                            "MIG-265a219d", ".gua-owners", "0 ", "0.x"}) {
        EXPECT_EQ(parse_mapping_name(bad), std::nullopt) << bad;
    }
}

TEST(AllocMappingDir, JobIds) {
    EXPECT_EQ(parse_job_ids("").value(), std::vector<std::string>{});
    EXPECT_EQ(parse_job_ids("\n\n").value(), std::vector<std::string>{});
    EXPECT_EQ(parse_job_ids("42\n").value(), std::vector<std::string>{"42"});
    EXPECT_EQ(parse_job_ids(" 42 \r\n43_1\n\n12345+0").value(),
              (std::vector<std::string>{"42", "43_1", "12345+0"}));
    EXPECT_EQ(parse_job_ids("42\nrm -rf /\n").error().message, "line 2: not a job id");
    EXPECT_FALSE(parse_job_ids("../../etc/passwd"));
    EXPECT_FALSE(parse_job_ids(std::string("4\0002", 3)));
    EXPECT_FALSE(parse_job_ids(std::string(65, '1')));
    EXPECT_TRUE(parse_job_ids(std::string(64, '1')));
}

TEST(AllocMappingDir, OwnerFiles) {
    const OwnerInfo owner = parse_owner("user=alice\naccount=physics\nfuture=x\n").value();
    EXPECT_EQ(owner.user, "alice");
    EXPECT_EQ(owner.account, "physics");
    EXPECT_EQ(owner.kind, AllocationKind::slurm_job);
    EXPECT_EQ(parse_owner("kind=reservation\nuser=bob").value().kind, AllocationKind::reservation);
    EXPECT_FALSE(parse_owner("kind=pod"));
    EXPECT_FALSE(parse_owner("user=al ice"));
    EXPECT_FALSE(parse_owner("account=$(reboot)"));
}

TEST(AllocMappingDir, ScanWithOwnersMigAndEmptyFiles) {
    test::TempDir dir;
    std::filesystem::create_directory(dir.file(".gua-owners"));
    write_file(dir.file(".gua-owners/42"), "user=alice\naccount=physics\n");
    write_file(dir.file("0"), "42\n");
    write_file(dir.file("1"), "");       // empty: allocates nothing
    write_file(dir.file("2.1"), "43\n"); // MIG instance 1 of card 2, no owner file
    write_file(dir.file("notes.txt"), "42\n");
    const Snapshot snapshot = read_mapping_dir(dir.path());
    ASSERT_TRUE(snapshot.readable);
    EXPECT_TRUE(snapshot.unknown.empty());
    const std::vector<std::pair<DeviceRef, Allocation>> want = {
        {ref(0), {AllocationKind::slurm_job, "42", "alice", "physics"}},
        {ref(2, 1), {AllocationKind::slurm_job, "43", "", ""}}};
    EXPECT_EQ(snapshot.entries, want);
}

TEST(AllocMappingDir, HostileFilesMakeOnlyTheirCardUnknown) {
    test::TempDir dir;
    write_file(dir.file("target"), "99\n");
    ASSERT_EQ(::symlink(dir.file("target").c_str(), dir.file("0").c_str()), 0);
    ASSERT_EQ(::mkfifo(dir.file("1").c_str(), 0600), 0); // a FIFO would block a plain open
    write_file(dir.file("2"), std::string(k_max_mapping_file_bytes + 1, '\n'));
    std::filesystem::create_directory(dir.file("3"));
    write_file(dir.file("4"), "7\n");
    write_file(dir.file("5"), "7; reboot\n");
    const Snapshot snapshot = read_mapping_dir(dir.path());
    ASSERT_TRUE(snapshot.readable);
    ASSERT_EQ(snapshot.entries.size(), 1U);
    EXPECT_EQ(snapshot.entries[0].first, ref(4));
    std::vector<unsigned> unknown;
    for (const auto& [device, reason] : snapshot.unknown) {
        unknown.push_back(*device.index);
        EXPECT_FALSE(reason.empty());
    }
    EXPECT_EQ(unknown, (std::vector<unsigned>{0, 1, 2, 3, 5}));
}

TEST(AllocMappingDir, MissingDirectoryIsUnreadable) {
    test::TempDir dir;
    const Snapshot snapshot = read_mapping_dir(dir.file("absent"));
    EXPECT_FALSE(snapshot.readable);
    EXPECT_NE(snapshot.error.find("absent"), std::string::npos) << snapshot.error;
}

// Waits until `source` has rescanned after now (at most 5 s).
void wait_for_rescan(const MappingDirSource& source) {
    const std::uint64_t seen = source.scans();
    for (int i = 0; i < 500 && source.scans() == seen; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

CardQuery card(unsigned index) {
    CardQuery query;
    query.index = index;
    return query;
}

TEST(AllocMappingSource, EdgesAreTimedWhenTheFilesChangeNotAtPolls) {
    test::TempDir dir;
    // A long rescan period: only inotify can time these edges within a second.
    MappingDirSource source(dir.path(), 30 * k_us_per_second);
    const TimeUs start = wall_now();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const TimeUs created = wall_now();
    write_file(dir.file("1"), "77\n");
    wait_for_rescan(source);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const TimeUs removed = wall_now();
    std::filesystem::remove(dir.file("1"));
    wait_for_rescan(source);
    const TimeUs end = wall_now();
    const std::vector<Segment> got = source.query(card(1), start, end);
    ASSERT_EQ(got.size(), 3U);
    EXPECT_EQ(got[0].state, AllocationState::unallocated);
    EXPECT_EQ(got[1].state, AllocationState::allocated);
    EXPECT_EQ(got[1].allocations.at(0).id, "77");
    EXPECT_EQ(got[2].state, AllocationState::unallocated);
    EXPECT_LT(std::abs(got[1].begin - created), k_us_per_second);
    EXPECT_LT(std::abs(got[1].end - removed), k_us_per_second);
    EXPECT_EQ(got[2].end, end);
}

TEST(AllocMappingSource, ADirectoryThatGoesAwayIsUnknownUntilItReturns) {
    test::TempDir dir;
    const std::string mapping = dir.file("map");
    std::filesystem::create_directory(mapping);
    write_file(mapping + "/0", "5\n");
    MappingDirSource source(mapping, 100 * k_us_per_ms);
    const TimeUs start = wall_now();
    std::filesystem::remove_all(mapping);
    wait_for_rescan(source);
    wait_for_rescan(source);
    const TimeUs gone = wall_now();
    std::filesystem::create_directory(mapping);
    write_file(mapping + "/0", "6\n");
    wait_for_rescan(source);
    wait_for_rescan(source);
    const std::vector<Segment> got = source.query(card(0), start, wall_now());
    ASSERT_GE(got.size(), 3U);
    EXPECT_EQ(got.front().allocations.at(0).id, "5");
    // remove_all deletes the file before the directory: a scan in between may see an empty
    // directory (unallocated) before the directory is gone (unknown).
    const auto unknown = std::find_if(got.begin() + 1, got.end() - 1, [](const Segment& s) {
        return s.state == AllocationState::unknown;
    });
    ASSERT_NE(unknown, got.end() - 1) << "no unknown span while the directory was gone";
    EXPECT_NE(unknown->reason.find("map"), std::string::npos) << unknown->reason;
    EXPECT_LE(unknown->begin, gone);
    EXPECT_EQ(got.back().allocations.at(0).id, "6");
}

} // namespace mapping_dir_test
} // namespace gua::alloc
