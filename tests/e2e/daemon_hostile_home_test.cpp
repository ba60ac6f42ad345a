// SPDX-License-Identifier: Apache-2.0
// End to end: three users' rootless containers whose Podman stores are hostile — a FIFO, a link to
// a root-only file naming the container, a 300 MB sparse file — while the real daemon records
// their real processes (setpriv, in user-created libpod scopes). The daemon ticks on time, its
// /metrics tick counter advances, SIGTERM stops it promptly, and no name leaks. The users exist in
// a passwd file bind-mounted over /etc/passwd in the daemon's own mount namespace. Needs root.
#include "e2e/daemon_e2e.hpp"
#include "fleet/http_client.hpp"
#include "identity/child_process.hpp"
#include "support/cgroup_tree.hpp"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
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
    passwd << std::ifstream("/etc/passwd").rdbuf();
    m_tree = std::make_unique<CgroupTree>(v1 ? *v1 : *v2, "gua-hostile-home");
    json processes = json::array();
    for (int i = 0; i < 3; ++i) {
        const int uid = k_first_uid + i;
        passwd << "hostile" << i << ":x:" << uid << ":" << uid << "::" << make_home(i, plants[i])
               << ":/bin/sh\n";
        m_children.push_back(std::make_unique<ChildProcess>(std::vector<std::string>{
            "/usr/bin/setpriv", "--reuid=" + std::to_string(uid), "--regid=" + std::to_string(uid),
            "--clear-groups", "/usr/bin/sleep", "60"}));
        ASSERT_TRUE(m_children.back()->wait_for_comm("sleep"));
        const std::string scope = "user.slice/user-" + std::to_string(uid) + ".slice/user@" +
                                  std::to_string(uid) + ".service/user.slice/libpod-" +
                                  container_id(i) + ".scope";
        if (!m_tree->place(scope, m_children.back()->pid())) {
            GTEST_SKIP() << "cgroups are not writable here";
        }
        const std::string env_name = "GUA_E2E_PID_HOSTILE" + std::to_string(i);
        set_env(env_name, std::to_string(m_children.back()->pid()));
        processes.push_back(holder(i, 4000, 0, 0, env_name));
    }
    write_atomically(path("passwd"), passwd.str());
    set_env("GUA_DOCKER_ROOT", path("node/docker"));
    set_env("GUA_PODMAN_ROOT", path("node/podman"));
    write_scenario({{"devices", {{{"util", {{0, 2}}}}, {{"util", {{0, 2}}}}, {{"util", {{0, 2}}}}}},
                    {"processes", processes}});

    std::vector<std::string> args{"--mount",      "--propagation",
                                  "private",      "/bin/sh",
                                  "-c",           "mount --bind \"$0\" /etc/passwd && exec \"$@\"",
                                  path("passwd"), GUA_BINARY};
    for (const std::string& a : daemon_args({"--interval", "250ms", "--listen", "127.0.0.1:0"})) {
        args.push_back(a);
    }
    std::map<std::string, std::string> e = env();
    e["NO_COLOR"] = "1";
    test::BackgroundProcess daemon("/usr/bin/unshare", args, e, path(""), "hostile");
    ASSERT_TRUE(daemon.wait_for("serving the report on", 30s)) << daemon.err();
    std::smatch match;
    const std::string log = daemon.err();
    ASSERT_TRUE(std::regex_search(
        log, match, std::regex(R"(serving the report on http://127\.0\.0\.1:(\d+)/ )")))
        << log;
    const auto port = static_cast<std::uint16_t>(std::stoi(match[1]));

    // On time: 4 ticks a second; a 3 s window must hold at least 8 of its 12.
    ASSERT_TRUE(
        test::poll_until([&] { return ticks_total(http_get(port, "/metrics").body) >= 2; }, 10s))
        << "no tick: " << http_get(port, "/metrics").body.substr(0, 2000) << daemon.err();
    const long first = ticks_total(http_get(port, "/metrics").body);
    std::this_thread::sleep_for(3s);
    const long later = ticks_total(http_get(port, "/metrics").body);
    EXPECT_GE(later - first, 8) << "the daemon does not tick on time";

    const auto stop = std::chrono::steady_clock::now();
    daemon.signal(SIGTERM);
    EXPECT_EQ(daemon.wait_exit(5s), 0) << daemon.err();
    EXPECT_LT(std::chrono::steady_clock::now() - stop, 3s) << "SIGTERM did not stop it promptly";

    test::RawDb raw(db());
    EXPECT_EQ(raw.one("SELECT count(DISTINCT systemd_unit) FROM process_tick WHERE "
                      "systemd_unit LIKE 'libpod-ccc%' AND container_id = ''"),
              "3")
        << "the three processes were resolved, their scopes claims (no container id)";
    EXPECT_EQ(raw.one("SELECT count(*) FROM identity WHERE container_name <> ''"), "0")
        << "no store named anything";
    EXPECT_EQ(raw.one("SELECT count(*) FROM identity WHERE container_name LIKE '%secret%'"), "0");
}

} // namespace daemon_hostile_home_test
} // namespace gua::e2e
