// SPDX-License-Identifier: Apache-2.0
// `gua top` you can act from, in a pseudo-terminal with real holder processes on the fake driver:
// the host CPU % and RSS columns against /proc for a spinning and a sleeping holder; the signal
// keys — SIGTERM and SIGKILL sent only after y, cancelled by any other key, refused for another
// user's process (gua run as uid 1500 through setpriv), never sent with --readonly.
#include "e2e/policy_harness.hpp"
#include "e2e/pty_top.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <fstream>
#include <sstream>

namespace gua::policy_e2e {
namespace top_act_e2e_test { // named after the file: unique in a unity batch

constexpr std::uint32_t k_me = 1500;
constexpr std::uint32_t k_other = 1501;

/// utime + stime of `pid` in clock ticks (0 when gone).
std::uint64_t cpu_ticks(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), {});
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) {
        return 0;
    }
    std::istringstream fields(stat.substr(close + 2));
    std::string f;
    std::uint64_t utime = 0;
    std::uint64_t stime = 0;
    for (int i = 3; i <= 15 && fields >> f; ++i) {
        utime = i == 14 ? std::stoull(f) : utime;
        stime = i == 15 ? std::stoull(f) : stime;
    }
    return utime + stime;
}

/// VmRSS of `pid` in KiB (-1 when gone).
long rss_kib(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("VmRSS:", 0) == 0) {
            return std::stol(line.substr(6));
        }
    }
    return -1;
}

/// The holder row of `pid` in a frame, split at blanks: GPU, user, pid, where, memory (two
/// fields), SM, CPU, RSS, … (a selected row starts with '>'); empty when absent.
std::vector<std::string> row_of(const std::vector<std::string>& frame, pid_t pid) {
    for (const std::string& line : frame) {
        std::istringstream in(line.rfind('>', 0) == 0 ? line.substr(1) : line);
        std::vector<std::string> f;
        for (std::string w; in >> w;) {
            f.push_back(w);
        }
        if (f.size() > 8 && f[2] == std::to_string(pid) && f[5] == "GiB") {
            return f;
        }
    }
    return {};
}

/// The pid of the row marked selected in a frame, 0 when none.
pid_t selected(const std::vector<std::string>& frame) {
    for (const std::string& line : frame) {
        if (line.rfind('>', 0) == 0) {
            std::istringstream in(line.substr(1));
            std::string gpu;
            std::string user;
            pid_t pid = 0;
            return in >> gpu >> user >> pid ? pid : 0;
        }
    }
    return 0;
}

/// A scene with the fake driver sampled by `gua top` itself (no daemon, no database).
struct TopScene {
    Scene scene;
    std::vector<std::string> args(std::vector<std::string> extra = {}) const {
        std::vector<std::string> a{"--db",           scene.dir().file("none.db"),
                                   "--config",       scene.dir().file("gua.toml"),
                                   "--nvml-library", fake_library(),
                                   "--interval",     "1s"};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
};

/// The line index of the holder row of `pid` in a frame, -1 when absent.
int line_of(const std::vector<std::string>& frame, pid_t pid) {
    for (std::size_t i = 0; i < frame.size(); ++i) {
        std::istringstream in(frame[i].rfind('>', 0) == 0 ? frame[i].substr(1) : frame[i]);
        std::string gpu;
        std::string user;
        pid_t row = 0;
        if (in >> gpu >> user >> row && row == pid) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

/// Presses ↓ or ↑ towards the row of `pid` until it is selected; false when it never is.
bool select_row(PtyTop& top, pid_t pid) {
    for (int i = 0; i < 8; ++i) {
        const std::vector<std::string> frame = top.last_frame();
        const pid_t now = selected(frame);
        if (now == pid) {
            return true;
        }
        const bool down = now == 0 || line_of(frame, now) < line_of(frame, pid);
        const std::size_t before = top.frames();
        top.send(down ? "\x1b[B" : "\x1b[A");
        // A whole frame: an arrow clears any message, so the footer lists the keys again.
        top.frame_until(
            before, "q quit", [](const auto&) { return true; }, 3s);
    }
    return selected(top.last_frame()) == pid;
}

/// Sends `keys` and waits up to `timeout` for a frame whose last line (the footer) contains
/// `text`.
bool footer_after(PtyTop& top, const std::string& keys, const std::string& text,
                  std::chrono::milliseconds timeout = 5s) {
    const std::size_t before = top.frames();
    top.send(keys);
    return top.frame_until(
        before, text, [](const auto&) { return true; }, timeout);
}

TEST(TopActE2E, CpuAndRssColumnsMatchProc) {
    GUA_REQUIRE_ROOT();
    TopScene t;
    auto spinner = start_as(k_me, "/bin/sh", {"-c", "while :; do :; done"});
    auto sleeper = start_as(k_me, "/bin/sleep", {"120"});
    ASSERT_TRUE(wait_for_comm(spinner->pid(), "sh"));
    ASSERT_TRUE(wait_for_comm(sleeper->pid(), "sleep"));
    t.scene.hold(spinner->pid(), 2048, 0);
    t.scene.hold(sleeper->pid(), 1024, 1);
    t.scene.write("");
    PtyTop top(t.args(), 40, 160);
    ASSERT_TRUE(top.read_until(std::to_string(sleeper->pid()), 15s)) << top.output();
    const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
    int compared = 0;
    std::size_t seen = top.frames();
    std::uint64_t ticks_before = cpu_ticks(spinner->pid());
    auto at_before = std::chrono::steady_clock::now();
    for (int round = 0; round < 12 && compared < 3; ++round) {
        ASSERT_TRUE(top.frame_until(
            seen, "q quit", [](const auto&) { return true; }, 5s))
            << top.output();
        // /proc read as the frame arrives: the same interval as gua's, give or take the pty.
        const std::uint64_t ticks = cpu_ticks(spinner->pid());
        const auto at = std::chrono::steady_clock::now();
        seen = top.frames();
        const std::vector<std::string> frame = top.last_frame();
        const std::vector<std::string> busy = row_of(frame, spinner->pid());
        const std::vector<std::string> idle = row_of(frame, sleeper->pid());
        ASSERT_FALSE(busy.empty() || idle.empty()) << top.output();
        const double span_s = std::chrono::duration<double>(at - at_before).count();
        const double truth = 100.0 * static_cast<double>(ticks - ticks_before) / hz / span_s;
        ticks_before = ticks;
        at_before = at;
        if (busy[7] == "-" || round == 0) {
            continue; // the first sight of a process has no CPU % yet
        }
        const double shown = std::stod(busy[7]);
        std::cout << "[top cpu] spinner shown " << shown << " % /proc " << truth << " %\n";
        EXPECT_NEAR(shown, truth, 12.0) << "the spinner's CPU % over the refresh";
        EXPECT_GT(shown, 20.0) << "a spinning holder is busy on the host";
        EXPECT_EQ(idle[7], "0%") << "a sleeping holder uses no CPU";
        EXPECT_NEAR(std::stod(busy[8]), static_cast<double>(rss_kib(spinner->pid())) / 1024.0, 1.0);
        EXPECT_NEAR(std::stod(idle[8]), static_cast<double>(rss_kib(sleeper->pid())) / 1024.0, 1.0);
        ++compared;
    }
    EXPECT_GE(compared, 3) << top.output();
    top.send("q");
    EXPECT_TRUE(top.wait_exit(5s));
}

TEST(TopActE2E, SignalsOnlyAfterYAndOnlyTheUsersOwnProcesses) {
    GUA_REQUIRE_ROOT();
    TopScene t;
    auto mine = start_as(k_me, "/bin/sleep", {"120"});
    auto mine_too = start_as(k_me, "/bin/sleep", {"121"});
    auto theirs = start_as(k_other, "/bin/sleep", {"122"});
    for (const auto* c : {mine.get(), mine_too.get(), theirs.get()}) {
        ASSERT_TRUE(wait_for_comm(c->pid(), "sleep"));
    }
    t.scene.hold(mine->pid(), 8192, 0);
    t.scene.hold(mine_too->pid(), 4096, 1);
    t.scene.hold(theirs->pid(), 2048, 1);
    t.scene.write("");
    // gua top as uid 1500: it may signal its own processes, not uid 1501's.
    PtyTop top(t.args(), 40, 160,
               {"/usr/bin/setpriv", "--reuid=" + std::to_string(k_me),
                "--regid=" + std::to_string(k_me), "--clear-groups"});
    ASSERT_TRUE(top.read_until(std::to_string(theirs->pid()), 15s)) << top.output();

    // Another user's process: refused before any confirmation.
    ASSERT_TRUE(select_row(top, theirs->pid())) << top.output();
    EXPECT_TRUE(footer_after(top, "K",
                             "cannot signal: pid " + std::to_string(theirs->pid()) +
                                 " belongs to uid 1501, not to you"))
        << top.output();
    EXPECT_TRUE(footer_after(top, "y", "q quit")) << "y without a confirmation: just the keys";
    EXPECT_TRUE(theirs->running());

    // SIGTERM: asked, cancelled by n, then sent by y.
    ASSERT_TRUE(select_row(top, mine->pid())) << top.output();
    EXPECT_TRUE(footer_after(top, "k", "send SIGTERM to pid " + std::to_string(mine->pid())))
        << top.output();
    std::this_thread::sleep_for(500ms);
    EXPECT_TRUE(mine->running()) << "nothing is sent while the confirmation waits";
    EXPECT_TRUE(footer_after(top, "n", "cancelled")) << top.output();
    EXPECT_TRUE(mine->running());
    EXPECT_TRUE(footer_after(top, "k", "send SIGTERM"));
    EXPECT_TRUE(footer_after(top, "y", "sent SIGTERM to pid " + std::to_string(mine->pid())))
        << top.output();
    const std::optional<int> term = mine->wait_exit(5s);
    ASSERT_TRUE(term);
    EXPECT_TRUE(WIFSIGNALED(*term) && WTERMSIG(*term) == SIGTERM);

    // SIGKILL the same way.
    ASSERT_TRUE(select_row(top, mine_too->pid())) << top.output();
    EXPECT_TRUE(footer_after(top, "K", "send SIGKILL to pid " + std::to_string(mine_too->pid())));
    EXPECT_TRUE(footer_after(top, "y", "sent SIGKILL")) << top.output();
    const std::optional<int> kill = mine_too->wait_exit(5s);
    ASSERT_TRUE(kill);
    EXPECT_TRUE(WIFSIGNALED(*kill) && WTERMSIG(*kill) == SIGKILL);
    EXPECT_TRUE(theirs->running()) << "the other user's process lives on";
    top.send("q");
    EXPECT_TRUE(top.wait_exit(5s));
}

TEST(TopActE2E, ReadonlySendsNothing) {
    GUA_REQUIRE_ROOT();
    TopScene t;
    auto mine = start_as(k_me, "/bin/sleep", {"120"});
    ASSERT_TRUE(wait_for_comm(mine->pid(), "sleep"));
    t.scene.hold(mine->pid(), 8192, 0);
    t.scene.write("");
    PtyTop top(t.args({"--readonly"}), 40, 160); // as root: it could signal anything
    ASSERT_TRUE(top.read_until(std::to_string(mine->pid()), 15s)) << top.output();
    EXPECT_NE(top.output().find("read-only"), std::string::npos) << "the footer says so";
    ASSERT_TRUE(select_row(top, mine->pid())) << top.output();
    for (const std::string key : {"k", "K"}) {
        EXPECT_TRUE(footer_after(top, key, "read-only (--readonly): no signals")) << top.output();
        EXPECT_TRUE(footer_after(top, "y", "q quit")) << "nothing to confirm: just the keys";
    }
    std::this_thread::sleep_for(300ms);
    EXPECT_TRUE(mine->running());
    top.send("q");
    EXPECT_TRUE(top.wait_exit(5s));
}

// The tree view shows a holder under its parent: a shell started by the test runs the holder.
TEST(TopActE2E, TreeShowsTheHolderUnderItsParent) {
    GUA_REQUIRE_ROOT();
    TopScene t;
    auto shell = start_as(k_me, "/bin/sh", {"-c", "/bin/sleep 120; true"});
    pid_t child = 0;
    ASSERT_TRUE(eventually(
        [&] {
            std::ifstream in("/proc/" + std::to_string(shell->pid()) + "/task/" +
                             std::to_string(shell->pid()) + "/children");
            return static_cast<bool>(in >> child) && wait_for_comm(child, "sleep");
        },
        5s));
    struct KillChild { // the sleep outlives its shell otherwise, and holds the test's pipe
        pid_t pid;
        ~KillChild() { ::kill(pid, SIGKILL); }
    } kill_child{child};
    t.scene.hold(child, 8192, 0);
    t.scene.write("");
    PtyTop top(t.args(), 40, 160);
    ASSERT_TRUE(top.read_until(std::to_string(child), 15s)) << top.output();
    const std::size_t before = top.frames();
    top.send("t");
    const auto tree = [&](const std::vector<std::string>& f) {
        bool parent = false;
        for (const std::string& line : f) {
            if (line.find(std::to_string(shell->pid())) != std::string::npos &&
                line.find(" sh") != std::string::npos) {
                parent = true;
            } else if (parent && line.find(std::to_string(child)) != std::string::npos) {
                return line.find("└─ ") != std::string::npos;
            }
        }
        return false;
    };
    EXPECT_TRUE(top.frame_until(before, "q quit", tree, 5s)) << top.output();
    EXPECT_NE(top.output().find("as a process tree"), std::string::npos);
    top.send("q");
    EXPECT_TRUE(top.wait_exit(5s));
}

} // namespace top_act_e2e_test
} // namespace gua::policy_e2e
