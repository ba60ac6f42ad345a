// SPDX-License-Identifier: Apache-2.0
// End to end: three users' rootless containers whose Podman stores are hostile — a FIFO, a link to
// a root-only file naming the container, a 300 MB sparse file — while the real daemon records
// their real processes (setpriv, in user-created libpod scopes). The daemon ticks on time, its
// /metrics tick counter advances, SIGTERM stops it promptly, and no name leaks; and a user whose
// home is a file system that stalls (FUSE, as a hung NFS server would) never holds a tick. The
// users exist in a passwd file bind-mounted over /etc/passwd in the daemon's own mount namespace.
// Needs root.
#include "e2e/daemon_e2e.hpp"
#include "fleet/http_client.hpp"
#include "identity/child_process.hpp"
#include "support/cgroup_tree.hpp"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gua::e2e {
namespace daemon_hostile_home_test { // named after the file: unique in a unity batch

namespace fs = std::filesystem;
using fleet_testing::http_get;
using identity::testing::ChildProcess;
using test::CgroupTree;

constexpr int k_first_uid = 54322;

std::string container_id(int i) {
    return std::string(63, 'c') + std::to_string(i);
}

/// gua_daemon_ticks_total of a /metrics page (-1 when absent).
long ticks_total(const std::string& metrics) {
    std::smatch m;
    return std::regex_search(metrics, m, std::regex(R"(\ngua_daemon_ticks_total (\d+))"))
               ? std::stol(m[1])
               : -1;
}

class DaemonHostileHome : public DaemonTest {
  protected:
    void SetUp() override {
        if (geteuid() != 0 || !fs::exists("/usr/bin/unshare")) {
            GTEST_SKIP() << "needs root (other uids, cgroups, a private mount namespace)";
        }
    }

    /// Home of user `i` with its store's containers.json made by `plant`; all of it owned by
    /// the user, as a real home is.
    std::string make_home(int i, const std::function<void(const std::string& file)>& plant) {
        const std::string home = path("home/u" + std::to_string(i));
        const std::string dir = home + "/.local/share/containers/storage/overlay-containers";
        fs::create_directories(dir);
        plant(dir + "/containers.json");
        for (const auto& e : fs::recursive_directory_iterator(home)) {
            EXPECT_EQ(::lchown(e.path().c_str(), k_first_uid + i, k_first_uid + i), 0) << e.path();
        }
        EXPECT_EQ(::lchown(home.c_str(), k_first_uid + i, k_first_uid + i), 0) << home;
        return home;
    }

    /// Starts a sleeper as `uid` in a user-created libpod scope of container_id(i) and adds it
    /// to `processes` (card i, 4000 MiB, cold). False when cgroups are not writable here.
    bool spawn_in_scope(int i, int uid, json& processes) {
        m_children.push_back(std::make_unique<ChildProcess>(std::vector<std::string>{
            "/usr/bin/setpriv", "--reuid=" + std::to_string(uid), "--regid=" + std::to_string(uid),
            "--clear-groups", "/usr/bin/sleep", "60"}));
        EXPECT_TRUE(m_children.back()->wait_for_comm("sleep"));
        const std::string scope = "user.slice/user-" + std::to_string(uid) + ".slice/user@" +
                                  std::to_string(uid) + ".service/user.slice/libpod-" +
                                  container_id(i) + ".scope";
        if (!m_tree->place(scope, m_children.back()->pid())) {
            return false;
        }
        const std::string env_name = "GUA_E2E_PID_HOSTILE" + std::to_string(i);
        set_env(env_name, std::to_string(m_children.back()->pid()));
        processes.push_back(holder(i, 4000, 0, 0, env_name));
        return true;
    }

    /// Starts the daemon (4 ticks a second, /metrics on loopback) with `passwd` bind-mounted over
    /// /etc/passwd in its own mount namespace; returns it and its port through `port`.
    std::unique_ptr<test::BackgroundProcess> start_with_passwd(const std::string& passwd,
                                                               std::uint16_t& port) {
        write_atomically(path("passwd"), passwd);
        std::vector<std::string> args{
            "--mount",      "--propagation",
            "private",      "/bin/sh",
            "-c",           "mount --bind \"$0\" /etc/passwd && exec \"$@\"",
            path("passwd"), GUA_BINARY};
        for (const std::string& a :
             daemon_args({"--interval", "250ms", "--listen", "127.0.0.1:0"})) {
            args.push_back(a);
        }
        std::map<std::string, std::string> e = env();
        e["NO_COLOR"] = "1";
        auto daemon = std::make_unique<test::BackgroundProcess>("/usr/bin/unshare", args, e,
                                                                path(""), "hostile");
        EXPECT_TRUE(daemon->wait_for("serving the report on", 30s)) << daemon->err();
        std::smatch match;
        const std::string log = daemon->err();
        EXPECT_TRUE(std::regex_search(
            log, match, std::regex(R"(serving the report on http://127\.0\.0\.1:(\d+)/ )")))
            << log;
        port = match.empty() ? 0 : static_cast<std::uint16_t>(std::stoi(match[1]));
        return daemon;
    }

    /// The daemon ticks on time (4 a second: a 3 s window holds at least 8 of its 12) and
    /// SIGTERM stops it promptly: its last line is logged within 3 s. Then `release` is called
    /// (a thread blocked in a stalled file system keeps even a stopped process from being reaped
    /// until the file system answers), and the process must exit with 0.
    static void expect_on_time_and_stoppable(
        test::BackgroundProcess& daemon, std::uint16_t port,
        const std::function<void()>& release = [] {}) {
        ASSERT_TRUE(test::poll_until(
            [&] { return ticks_total(http_get(port, "/metrics").body) >= 2; }, 10s))
            << "no tick: " << http_get(port, "/metrics").body.substr(0, 2000) << daemon.err();
        const long first = ticks_total(http_get(port, "/metrics").body);
        std::this_thread::sleep_for(3s);
        const long later = ticks_total(http_get(port, "/metrics").body);
        EXPECT_GE(later - first, 8) << "the daemon does not tick on time";

        const auto stop = std::chrono::steady_clock::now();
        daemon.signal(SIGTERM);
        EXPECT_TRUE(daemon.wait_for("gua daemon stopped after", 3s)) << daemon.err();
        EXPECT_LT(std::chrono::steady_clock::now() - stop, 3s)
            << "SIGTERM did not stop it promptly";
        release();
        EXPECT_EQ(daemon.wait_exit(5s), 0) << daemon.err();
    }

    static std::string system_passwd() {
        std::ostringstream passwd;
        passwd << std::ifstream("/etc/passwd").rdbuf();
        return passwd.str();
    }

    std::unique_ptr<CgroupTree> m_tree; // destroyed after the children
    std::vector<std::unique_ptr<ChildProcess>> m_children;
};

TEST_F(DaemonHostileHome, HostileStoresNeverStopTheDaemon) {
    const std::optional<fs::path> v1 = test::find_cgroup_mount("name=systemd");
    const std::optional<fs::path> v2 = test::find_cgroup_mount("");
    if (!v1 && !v2) {
        GTEST_SKIP() << "no cgroup hierarchy mounted";
    }
    fs::permissions(path(""), fs::perms(0755));
    const std::string secret = path("root-only.json");
    std::ofstream(secret) << R"([{"id":")" << container_id(1) << R"(","names":["secret-name"]}])";
    ::chmod(secret.c_str(), 0600);
    const std::vector<std::function<void(const std::string&)>> plants{
        [](const std::string& f) { ::mkfifo(f.c_str(), 0644); },
        [&](const std::string& f) { fs::create_symlink(secret, f); },
        [](const std::string& f) {
            std::ofstream(f) << "[";
            EXPECT_EQ(::truncate(f.c_str(), 300L * 1024 * 1024), 0) << f;
        },
    };
    std::ostringstream passwd;
    passwd << system_passwd();
    m_tree = std::make_unique<CgroupTree>(v1 ? *v1 : *v2, "gua-hostile-home");
    json processes = json::array();
    for (int i = 0; i < 3; ++i) {
        const int uid = k_first_uid + i;
        passwd << "hostile" << i << ":x:" << uid << ":" << uid << "::" << make_home(i, plants[i])
               << ":/bin/sh\n";
        if (!spawn_in_scope(i, uid, processes)) {
            GTEST_SKIP() << "cgroups are not writable here";
        }
    }
    set_env("GUA_DOCKER_ROOT", path("node/docker"));
    set_env("GUA_PODMAN_ROOT", path("node/podman"));
    write_scenario({{"devices", {{{"util", {{0, 2}}}}, {{"util", {{0, 2}}}}, {{"util", {{0, 2}}}}}},
                    {"processes", processes}});
    std::uint16_t port = 0;
    const auto daemon = start_with_passwd(passwd.str(), port);
    ASSERT_NE(port, 0);
    expect_on_time_and_stoppable(*daemon, port);

    test::RawDb raw(db());
    EXPECT_EQ(raw.one("SELECT count(DISTINCT systemd_unit) FROM process_tick WHERE "
                      "systemd_unit LIKE 'libpod-ccc%' AND container_id = ''"),
              "3")
        << "the three processes were resolved, their scopes claims (no container id)";
    EXPECT_EQ(raw.one("SELECT count(*) FROM identity WHERE container_name <> ''"), "0")
        << "no store named anything";
    EXPECT_EQ(raw.one("SELECT count(*) FROM identity WHERE container_name LIKE '%secret%'"), "0");
}

/// A FUSE file system that stalls every lookup below its root (tests/tools/stall_fs.cpp), mounted
/// at `mountpoint` for the test's life; unmounted (lazily, after its server is killed) at the end.
class StalledMount {
  public:
    StalledMount(const std::string& server, int uid, std::string mountpoint)
        : m_mountpoint(std::move(mountpoint)) {
        fs::create_directories(m_mountpoint);
        m_server = std::make_unique<test::BackgroundProcess>(
            server, std::vector<std::string>{std::to_string(uid), m_mountpoint},
            std::map<std::string, std::string>{}, fs::path(m_mountpoint).parent_path().string(),
            "stall-fs");
        m_mounted = test::poll_until(
            [&] {
                std::ifstream in("/proc/self/mountinfo");
                std::string line;
                while (std::getline(in, line)) {
                    if (line.find(" " + m_mountpoint + " ") != std::string::npos) {
                        return true;
                    }
                }
                return false;
            },
            10s);
    }
    ~StalledMount() { release(); }
    /// Kills the server (the kernel fails the requests it held) and unmounts, lazily.
    void release() {
        if (m_server) {
            m_server.reset();
            ::umount2(m_mountpoint.c_str(), MNT_DETACH);
        }
    }
    StalledMount(const StalledMount&) = delete;
    StalledMount& operator=(const StalledMount&) = delete;
    bool mounted() const { return m_mounted; }
    std::string log() const { return m_server ? m_server->err() : ""; }

  private:
    std::string m_mountpoint;
    std::unique_ptr<test::BackgroundProcess> m_server;
    bool m_mounted = false;
};

TEST_F(DaemonHostileHome, AStalledHomeNeverHoldsATick) {
#ifndef GUA_STALL_FS
    GTEST_SKIP() << "built without libfuse3: no stalling file system to test with";
#else
    const std::optional<fs::path> v1 = test::find_cgroup_mount("name=systemd");
    const std::optional<fs::path> v2 = test::find_cgroup_mount("");
    if (!v1 && !v2) {
        GTEST_SKIP() << "no cgroup hierarchy mounted";
    }
    if (!fs::exists("/dev/fuse")) {
        GTEST_SKIP() << "no /dev/fuse";
    }
    fs::permissions(path(""), fs::perms(0755));
    const int uid = k_first_uid + 9;
    // The user's home is the stalled mount: even the first component below it never answers.
    std::unique_ptr<test::BackgroundProcess> daemon; // destroyed after the mount is released
    StalledMount home(GUA_STALL_FS, uid, path("home/stalled"));
    if (!home.mounted()) {
        GTEST_SKIP() << "FUSE cannot be mounted here: " << home.log();
    }
    m_tree = std::make_unique<CgroupTree>(v1 ? *v1 : *v2, "gua-stalled-home");
    json processes = json::array();
    if (!spawn_in_scope(0, uid, processes)) {
        GTEST_SKIP() << "cgroups are not writable here";
    }
    const std::string passwd = system_passwd() + "stalled:x:" + std::to_string(uid) + ":" +
                               std::to_string(uid) + "::" + path("home/stalled") + ":/bin/sh\n";
    set_env("GUA_DOCKER_ROOT", path("node/docker"));
    set_env("GUA_PODMAN_ROOT", path("node/podman"));
    write_scenario({{"devices", {{{"util", {{0, 2}}}}}}, {"processes", processes}});
    std::uint16_t port = 0;
    daemon = start_with_passwd(passwd, port);
    ASSERT_NE(port, 0);
    // Killing the file system's server fails the lookup still waiting, so the stopped daemon's
    // last thread can end.
    expect_on_time_and_stoppable(*daemon, port, [&] { home.release(); });

    test::RawDb raw(db());
    EXPECT_EQ(raw.one("SELECT count(*) FROM process_tick WHERE user = 'stalled'"),
              raw.one("SELECT count(*) FROM process_tick"))
        << "its process was recorded at every tick, as its user's";
    EXPECT_NE(raw.one("SELECT count(*) FROM process_tick"), "0");
    EXPECT_EQ(raw.one("SELECT count(*) FROM identity WHERE container_name <> ''"), "0");
#endif
}

} // namespace daemon_hostile_home_test
} // namespace gua::e2e
