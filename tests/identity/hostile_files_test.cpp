// SPDX-License-Identifier: Apache-2.0
// Hostile files in every place identity reads a file (Docker's config.v2.json, the system Podman
// store, a user's rootless Podman store): a FIFO, a symbolic link to a root-only file, a huge
// sparse file, a mount inside a home and a directory of many entries never block, leak or cost
// more than the documented bounds; the per-round time budget of the node's names.
#include "identity/node_names.hpp"
#include "identity/node_tree.hpp"
#include "identity/untrusted_file.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <sys/mount.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace gua::identity {
namespace hostile_files_test { // named after the file: unique in a unity batch

namespace fs = std::filesystem;
using testing::NodeTree;
using namespace std::chrono_literals;

const std::string k_id = std::string(63, 'a') + "1";

/// Where a file is read, and how a lookup there reads it.
struct Place {
    std::string name;
    std::string file; ///< relative to the node root
    std::function<std::string(RuntimeNames&, const std::string& root)> lookup;
    std::string json; ///< valid content naming k_id "secret"
};

std::string podman_json() {
    return R"([{"id":")" + k_id + R"(","names":["secret"]}])";
}

std::vector<Place> places() {
    return {
        {"docker", "docker/containers/" + k_id + "/config.v2.json",
         [](RuntimeNames& r, const std::string&) { return r.lookup(k_id, 0); },
         R"({"Name":"/secret"})"},
        {"system podman", "podman/overlay-containers/containers.json",
         [](RuntimeNames& r, const std::string&) { return r.lookup(k_id, 0); }, podman_json()},
        {"rootless podman",
         "home/ann/.local/share/containers/storage/overlay-containers/containers.json",
         [](RuntimeNames& r, const std::string& root) {
             return r.lookup_rootless(k_id, root + "/home/ann", ::geteuid(), 0);
         },
         podman_json()},
    };
}

/// Runs `lookup`; when it has not returned after 3 s (blocked in open() on the FIFO at `fifo`),
/// records that and opens the FIFO for writing so that it returns.
std::string guarded(const std::function<std::string()>& lookup, const std::string& fifo,
                    bool& blocked) {
    std::future<std::string> result = std::async(std::launch::async, lookup);
    blocked = result.wait_for(3s) != std::future_status::ready;
    while (result.wait_for(10ms) != std::future_status::ready) {
        const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) {
            ::close(fd);
        }
    }
    return result.get();
}

/// Peak resident memory of this process in KiB since the last reset_peak().
long peak_kib() {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("VmHWM:")) {
            return std::stol(line.substr(6));
        }
    }
    return 0;
}
void reset_peak() {
    std::ofstream("/proc/self/clear_refs") << "5";
}

class HostileFiles : public ::testing::Test {
  protected:
    RuntimeNames names() const {
        return RuntimeNames(m_node.paths().docker_root, m_node.paths().podman_root);
    }
    std::string at(const Place& p) const { return m_node.root() + "/" + p.file; }
    void make_parent(const Place& p) const {
        fs::create_directories(fs::path(at(p)).parent_path());
    }
    NodeTree m_node;
};

TEST_F(HostileFiles, ValidFilesNameTheContainer) {
    for (const Place& p : places()) {
        make_parent(p);
        std::ofstream(at(p)) << p.json;
        RuntimeNames r = names();
        EXPECT_EQ(p.lookup(r, m_node.root()), "secret") << p.name;
        fs::remove_all(m_node.root() + "/home");
        fs::remove_all(m_node.root() + "/podman/overlay-containers");
        fs::remove_all(m_node.root() + "/docker/containers/" + k_id);
    }
}

TEST_F(HostileFiles, AFifoNeverBlocks) {
    for (const Place& p : places()) {
        make_parent(p);
        ASSERT_EQ(::mkfifo(at(p).c_str(), 0666), 0) << at(p);
        RuntimeNames r = names();
        bool blocked = false;
        const auto start = std::chrono::steady_clock::now();
        const std::string got = guarded([&] { return p.lookup(r, m_node.root()); }, at(p), blocked);
        EXPECT_FALSE(blocked) << p.name << ": the lookup blocked opening a FIFO";
        EXPECT_LT(std::chrono::steady_clock::now() - start, 1s) << p.name;
        EXPECT_EQ(got, "") << p.name;
        fs::remove(at(p));
    }
}

TEST_F(HostileFiles, ASymbolicLinkIsNotFollowed) {
    // A root-only file (mode 0600) naming the container, and links to it where gua reads.
    const std::string secret_dir = m_node.root() + "/root-only";
    fs::create_directories(secret_dir);
    for (const Place& p : places()) {
        const std::string target = secret_dir + "/" + fs::path(p.file).filename().string();
        std::ofstream(target) << p.json;
        ASSERT_EQ(::chmod(target.c_str(), 0600), 0);
        make_parent(p);
        fs::create_symlink(target, at(p));
        RuntimeNames r = names();
        EXPECT_EQ(p.lookup(r, m_node.root()), "") << p.name << ": the link was followed";
        fs::remove(at(p));
    }
}

TEST_F(HostileFiles, ALinkedDirectoryInAHomeIsNotFollowed) {
    // ~/.local is the user's: a link there to a tree holding a valid store is not followed.
    const std::string elsewhere = m_node.root() + "/elsewhere";
    fs::create_directories(elsewhere + "/share/containers/storage/overlay-containers");
    std::ofstream(elsewhere + "/share/containers/storage/overlay-containers/containers.json")
        << podman_json();
    fs::create_directories(m_node.root() + "/home/ann");
    fs::create_symlink(elsewhere, m_node.root() + "/home/ann/.local");
    RuntimeNames r = names();
    EXPECT_EQ(r.lookup_rootless(k_id, m_node.root() + "/home/ann", ::geteuid(), 0), "");
}

TEST_F(HostileFiles, AFileOfAnotherOwnerInAHomeIsNotRead) {
    const Place p = places()[2];
    make_parent(p);
    std::ofstream(at(p)) << p.json;
    RuntimeNames r = names();
    EXPECT_EQ(r.lookup_rootless(k_id, m_node.root() + "/home/ann", ::geteuid() + 1, 0), "")
        << "a home's store must belong to the home's owner (e.g. not a hard link to root's)";
}

TEST_F(HostileFiles, AHugeSparseFileIsRefusedWithoutReadingIt) {
    for (const Place& p : places()) {
        make_parent(p);
        {
            std::ofstream out(at(p));
            out << p.json;
        }
        ASSERT_EQ(::truncate(at(p).c_str(), 300L * 1024 * 1024), 0);
        RuntimeNames r = names();
        reset_peak();
        const long before = peak_kib();
        const auto start = std::chrono::steady_clock::now();
        EXPECT_EQ(p.lookup(r, m_node.root()), "") << p.name;
        EXPECT_LT(std::chrono::steady_clock::now() - start, 200ms) << p.name;
        EXPECT_LT(peak_kib() - before, 8 * 1024) << p.name << ": read into memory";
        fs::remove(at(p));
    }
}

TEST_F(HostileFiles, ARootlessStoreOverItsBoundIsRefusedEvenWhenValid) {
    const Place p = places()[2];
    make_parent(p);
    std::string json = podman_json();
    json.insert(json.size() - 1, std::string(RuntimeNames::k_max_rootless_store, ' '));
    std::ofstream(at(p)) << json;
    RuntimeNames r = names();
    EXPECT_EQ(p.lookup(r, m_node.root()), "");
}

TEST_F(HostileFiles, AMountInsideAHomeIsNotCrossed) {
    // A user can mount a FUSE file system in their home, whose reads can stall forever: gua never
    // crosses a mount beneath a home (a tmpfs stands for it here).
    const Place p = places()[2];
    make_parent(p);
    const std::string dir = fs::path(at(p)).parent_path().string();
    if (::mount("gua-test", dir.c_str(), "tmpfs", 0, nullptr) != 0) {
        GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
    }
    std::ofstream(at(p)) << p.json;
    RuntimeNames r = names();
    const std::string got = p.lookup(r, m_node.root());
    ::umount2(dir.c_str(), MNT_DETACH);
    EXPECT_EQ(got, "");
}

TEST_F(HostileFiles, AStoreOfManyEntriesCostsBoundedTime) {
    // More "<n>-containers" entries than are looked at (k_max_store_entries).
    const std::string storage = m_node.root() + "/home/ann/.local/share/containers/storage";
    fs::create_directories(storage);
    for (std::size_t i = 0; i < RuntimeNames::k_max_store_entries + 500; ++i) {
        std::ofstream(storage + "/" + std::to_string(i) + "-containers");
    }
    RuntimeNames r = names();
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(r.lookup_rootless(k_id, m_node.root() + "/home/ann", ::geteuid(), 0), "");
    EXPECT_LT(std::chrono::steady_clock::now() - start, 100ms)
        << "8 stores of 2 files looked at, not one per entry";
}

TEST_F(HostileFiles, TheStoreIsLookedAtAgainOnlyAfterTheRereadPeriod) {
    // A user rewriting their store at every tick makes gua read it at most every 10 s.
    const Place p = places()[2];
    make_parent(p);
    std::ofstream(at(p)) << "[]";
    RuntimeNames r = names();
    EXPECT_EQ(p.lookup(r, m_node.root()), "");
    std::ofstream(at(p)) << p.json;
    const std::string home = m_node.root() + "/home/ann";
    EXPECT_EQ(r.lookup_rootless(k_id, home, ::geteuid(), RuntimeNames::k_store_reread_us - 1), "");
    EXPECT_EQ(r.lookup_rootless(k_id, home, ::geteuid(), RuntimeNames::k_store_reread_us),
              "secret");
}

TEST(NodeNamesBudget, LookupsStopOnceTheRoundsBudgetIsSpent) {
    // Ten Docker containers whose config files each take a while to parse (3.5 MB of strings).
    NodeTree node;
    std::string big = R"({"Name":"/slow","Env":[)";
    while (big.size() < 3'500'000) {
        big += R"("AAAAAAAA",)";
    }
    big += R"("end"]})";
    std::vector<std::string> ids;
    for (int i = 0; i < 10; ++i) {
        ids.push_back(std::string(63, 'b') + std::to_string(i));
        node.add_docker(ids.back(), big);
    }
    NodeNames names(node.paths());
    const auto start = std::chrono::steady_clock::now();
    std::chrono::steady_clock::duration first{};
    int named = 0;
    for (const std::string& id : ids) {
        telemetry::Identity identity;
        identity.container_id = id;
        names.name(identity, 42);
        if (first == std::chrono::steady_clock::duration{}) {
            first = std::chrono::steady_clock::now() - start;
        }
        named += identity.container_name == "slow" ? 1 : 0;
        EXPECT_EQ(names_missing(identity), identity.container_name.empty());
    }
    const auto spent = std::chrono::steady_clock::now() - start;
    // Either lookups named their containers until one crossed the budget, or (a slow machine:
    // ASan) the first one alone outlasted it and went on on the worker.
    EXPECT_GE(named + static_cast<int>(names.late()), 1);
    EXPECT_LE(names.late(), 1U) << "one late lookup at most: it stalls the rest of the round";
    EXPECT_EQ(static_cast<std::uint64_t>(10 - named), names.deferred());
    if (names.deferred() == 0) {
        GTEST_SKIP() << "this machine parsed all ten within the budget: nothing to defer";
    }
    // The lookup that crosses the budget is waited for no longer (it goes on on the worker);
    // none starts after it.
    EXPECT_LT(spent, std::chrono::microseconds(NodeNames::k_budget_us) + 3 * first + 50ms)
        << "the round stopped soon after its budget";
    // Later rounds have budgets of their own. A lookup too slow for a whole round still ends on
    // the worker and leaves its name in the cache, so at most the round after names it.
    telemetry::Identity identity;
    identity.container_id = ids.back();
    for (std::int64_t round = 43; round <= 44 && identity.container_name.empty(); ++round) {
        const auto late_by = std::chrono::steady_clock::now() + 10s;
        while (names.stalled() && std::chrono::steady_clock::now() < late_by) {
            std::this_thread::sleep_for(1ms);
        }
        ASSERT_FALSE(names.stalled());
        names.name(identity, round);
    }
    EXPECT_EQ(identity.container_name, "slow");
}

} // namespace hostile_files_test
} // namespace gua::identity
