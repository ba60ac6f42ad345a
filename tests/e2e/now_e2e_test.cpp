// SPDX-License-Identifier: Apache-2.0
// `gua now` and `gua top` end to end: idle-held durations from the daemon's database, continued
// across a daemon restart and by gua's own sampling when no daemon records; `gua top` in a
// pseudo-terminal (render, keys, resize, q and Esc quit, terminal restored) and as plain frames.
#include "e2e/policy_harness.hpp"
#include "e2e/pty_top.hpp"
#include "support/run.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sstream>
#include <sys/ioctl.h>

namespace gua::policy_e2e {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

json now_json(const Scene& s) {
    const test::RunResult r = test::run_gua({"now", "--db", s.db(), "--format", "json",
                                             "--nvml-library", fake_library(), "--sample", "1s"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
}

/// Recorded time of GPU 0, in seconds (alice's holder idled through all of it).
double recorded_seconds(const Scene& s) {
    return static_cast<double>(s.scalar("SELECT sum(duration_us) FROM card_tick WHERE gpu_id = "
                                        "(SELECT id FROM gpu WHERE idx = 0)")) /
           1e6;
}

const json& holder(const json& now, pid_t pid) {
    for (const json& h : now.at("holders")) {
        if (h.at("pid") == pid) {
            return h;
        }
    }
    throw std::runtime_error("no holder with pid " + std::to_string(pid));
}

TEST(NowE2E, IdleDurationsContinueAcrossADaemonRestart) {
    GUA_REQUIRE_ROOT();
    Scene s;
    auto alice = start_as(1500, "/bin/sleep", {"60"});
    ASSERT_TRUE(wait_for_comm(alice->pid(), "sleep"));
    s.hold(alice->pid(), 8192);
    s.write("");
    auto daemon = s.start_daemon();
    ASSERT_TRUE(eventually([&] { return s.scalar("SELECT count(*) FROM card_tick") >= 8; }, 20s));
    const json first = now_json(s);
    EXPECT_EQ(first.at("source").at("kind"), "daemon");
    const json& h1 = holder(first, alice->pid());
    EXPECT_TRUE(h1.at("idle_held"));
    EXPECT_EQ(h1.at("user"), label(1500));
    EXPECT_EQ(h1.at("memory_mib"), 8192);
    const double idle1 = h1.at("idle_held_seconds");
    EXPECT_GE(idle1, 3.5);
    EXPECT_LE(idle1, 6.5);
    const std::string since = h1.at("idle_held_since");
    Scene::stop_daemon(*daemon);

    // No daemon: gua samples NVML itself for 1 s and continues the recorded streak.
    const json sampled = now_json(s);
    EXPECT_EQ(sampled.at("source").at("kind"), "sampled");
    EXPECT_NE(sampled.at("source").at("note").get<std::string>().find("no daemon is recording"),
              std::string::npos);
    const json& h2 = holder(sampled, alice->pid());
    EXPECT_EQ(h2.at("idle_held_since"), since);
    const double stopped_idle = recorded_seconds(s);
    EXPECT_NEAR(h2.at("idle_held_seconds").get<double>(), stopped_idle + 1.0, 0.5)
        << "the recorded streak plus the sampled second; the gap is not counted";

    std::this_thread::sleep_for(2s);
    daemon = s.start_daemon();
    ASSERT_TRUE(eventually([&] { return s.scalar("SELECT count(*) FROM run") == 2; }, 10s));
    const std::string second_run_ticks =
        "SELECT count(*) FROM card_tick WHERE run_id = (SELECT max(id) FROM run)";
    ASSERT_TRUE(eventually([&] { return s.scalar(second_run_ticks) >= 3; }, 20s));
    const json third = now_json(s);
    EXPECT_EQ(third.at("source").at("kind"), "daemon");
    const json& h3 = holder(third, alice->pid());
    EXPECT_EQ(h3.at("idle_held_since"), since) << "the streak continues after the restart";
    const double recorded = recorded_seconds(s);
    EXPECT_NEAR(h3.at("idle_held_seconds").get<double>(), recorded, 1.5);
    EXPECT_GT(h3.at("idle_held_seconds").get<double>(), idle1 + 2.0);
    const test::RunResult text = test::run_gua({"now", "--db", s.db()});
    EXPECT_EQ(text.exit_code, 0);
    EXPECT_NE(text.out.find("8.0 GiB   0%  idle "), std::string::npos) << text.out;
    Scene::stop_daemon(*daemon);
}

TEST(NowE2E, WithoutDaemonOrDriverItSaysSoAndFails) {
    policy_test::TempDir dir;
    const test::RunResult r = test::run_gua(
        {"now", "--db", dir.file("none.db"), "--nvml-library", dir.file("libnvidia-ml.so.1")});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find("gua: "), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    const test::RunResult no_db = test::run_gua(
        {"now", "--nvml-library", dir.file("libnvidia-ml.so.1")}, {{"GUA_DB", dir.file("x.db")}});
    EXPECT_EQ(no_db.exit_code, 3) << no_db.err;
    EXPECT_EQ(no_db.err.rfind("gua: no daemon is recording (no data in " + dir.file("x.db") +
                                  "), and NVML cannot be sampled: ",
                              0),
              0U)
        << no_db.err;
}

TEST(TopE2E, RendersInAPseudoTerminalAndQuitsOnQ) {
    GUA_REQUIRE_ROOT();
    Scene s;
    auto alice = start_as(1500, "/bin/sleep", {"60"});
    ASSERT_TRUE(wait_for_comm(alice->pid(), "sleep"));
    s.hold(alice->pid(), 8192);
    s.write("");
    auto daemon = s.start_daemon();
    ASSERT_TRUE(eventually([&] { return s.scalar("SELECT count(*) FROM card_tick") >= 4; }, 20s));
    PtyTop top({"--db", s.db(), "--interval", "1s"});
    ASSERT_TRUE(top.read_until("idle 3s", 10s) || top.read_until("idle 4s", 3s)) << top.output();
    EXPECT_TRUE(top.read_until("idle 5s", 5s)) << "refreshed in place" << top.output();
    EXPECT_NE(top.output().find("\x1b[?1049h"), std::string::npos) << "alternate screen";
    EXPECT_NE(top.output().find("\x1b[H\x1b[2J"), std::string::npos) << "redrawn in place";
    EXPECT_NE(top.output().find("gua top — refresh every 1s · sort: default"), std::string::npos);
    EXPECT_NE(top.output().find("▒"), std::string::npos) << "the three-state bar";
    top.send("q");
    const std::optional<int> status = top.wait_exit(5s);
    ASSERT_TRUE(status) << "q did not quit";
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
    const std::string& out = top.output();
    EXPECT_NE(out.rfind("\x1b[?25h\x1b[?1049l"), std::string::npos) << "terminal restored";
    Scene::stop_daemon(*daemon);
}

/// The widest line of terminal output: code points outside escape sequences, lines split at LF
/// and at cursor movements (CSI … H).
int widest_line(const std::string& out) {
    int widest = 0;
    int width = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
        const char c = out[i];
        if (c == '\x1b') {
            // CSI: ESC [ parameters final byte (@ to ~); other escapes are two bytes.
            if (i + 1 < out.size() && out[i + 1] == '[') {
                i += 2;
                while (i < out.size() && (out[i] < '@' || out[i] > '~')) {
                    ++i;
                }
                width = i < out.size() && out[i] == 'H' ? 0 : width;
            } else {
                ++i;
            }
            continue;
        }
        if (c == '\n') {
            width = 0;
        } else if (c != '\r' && (static_cast<unsigned char>(c) & 0xC0) != 0x80) {
            widest = std::max(widest, ++width);
        }
    }
    return widest;
}

// At 80×24 every line is cut to 80 columns; at 200×50 the holder's whole command line shows.
TEST(TopE2E, FitsTheTerminalWidthAndShowsTheCommandLine) {
    GUA_REQUIRE_ROOT();
    Scene s;
    auto alice = start_as(1500, "/bin/sleep", {"61"});
    ASSERT_TRUE(wait_for_comm(alice->pid(), "sleep"));
    s.hold(alice->pid(), 8192);
    s.write("");
    auto daemon = s.start_daemon();
    ASSERT_TRUE(eventually([&] { return s.scalar("SELECT count(*) FROM card_tick") >= 2; }, 20s));
    for (const auto& [rows, columns] :
         std::vector<std::pair<unsigned short, unsigned short>>{{24, 80}, {50, 200}}) {
        PtyTop top({"--db", s.db(), "--interval", "1s"}, rows, columns);
        ASSERT_TRUE(top.read_until(std::to_string(alice->pid()), 10s)) << top.output();
        ASSERT_TRUE(top.read_until("idle ", 10s)) << top.output();
        top.send("q");
        ASSERT_TRUE(top.wait_exit(5s)) << "q did not quit";
        EXPECT_LE(widest_line(top.output()), columns) << top.output();
        EXPECT_NE(top.output().find("gua top — refresh every 1s"), std::string::npos);
        if (columns == 200) {
            EXPECT_NE(top.output().find("  sleep 61"), std::string::npos) << top.output();
        }
    }
    Scene::stop_daemon(*daemon);
}

TEST(TopE2E, SamplesItselfWithoutADaemonAndQuitsMidSample) {
    GUA_REQUIRE_ROOT();
    Scene s;
    auto alice = start_as(1500, "/bin/sleep", {"60"});
    ASSERT_TRUE(wait_for_comm(alice->pid(), "sleep"));
    s.hold(alice->pid(), 8192);
    s.write("");
    PtyTop top({"--db", s.db(), "--interval", "1s", "--nvml-library", fake_library()});
    ASSERT_TRUE(top.read_until("sampled NVML directly", 10s)) << top.output();
    ASSERT_TRUE(top.read_until(std::to_string(alice->pid()), 5s)) << top.output();
    top.send("q");
    const std::optional<int> status = top.wait_exit(3s);
    ASSERT_TRUE(status) << "q did not quit";
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
}

TEST(TopE2E, PlainFramesWhenNotATerminal) {
    GUA_REQUIRE_ROOT();
    Scene s;
    auto alice = start_as(1500, "/bin/sleep", {"60"});
    ASSERT_TRUE(wait_for_comm(alice->pid(), "sleep"));
    s.hold(alice->pid(), 8192);
    s.write("");
    auto daemon = s.start_daemon();
    ASSERT_TRUE(eventually([&] { return s.scalar("SELECT count(*) FROM card_tick") >= 2; }, 20s));
    const test::RunResult r =
        test::run_gua({"top", "--db", s.db(), "--interval", "1s", "--count", "2"});
    Scene::stop_daemon(*daemon);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
    std::size_t frames = 0;
    for (std::size_t at = r.out.find("gua top —"); at != std::string::npos;
         at = r.out.find("gua top —", at + 1)) {
        ++frames;
    }
    EXPECT_EQ(frames, 2U) << r.out;
    EXPECT_NE(r.out.find(std::to_string(alice->pid())), std::string::npos);
}

/// The pids of the holder rows in a frame, top to bottom (the third column after "GPU  user").
std::vector<pid_t> holder_rows(const std::vector<std::string>& frame) {
    std::vector<pid_t> pids;
    bool in_table = false;
    for (const std::string& line : frame) {
        if (line.rfind("GPU  user", 0) == 0) {
            in_table = true;
            continue;
        }
        if (!in_table || line.empty() || line[0] != ' ') {
            in_table = in_table && !line.empty() && line[0] == ' ';
            continue;
        }
        std::istringstream fields(line);
        std::string gpu;
        std::string user;
        pid_t pid = 0;
        if (fields >> gpu >> user >> pid) {
            pids.push_back(pid);
        }
    }
    return pids;
}

/// Every line of the frame within `columns`, `rows` lines at most, the header on the first.
void expect_fits(const std::vector<std::string>& frame, int rows, int columns) {
    EXPECT_LE(frame.size(), static_cast<std::size_t>(rows));
    ASSERT_FALSE(frame.empty());
    EXPECT_EQ(frame.front().rfind("gua top — refresh every", 0), 0U) << frame.front();
    for (const std::string& line : frame) {
        EXPECT_LE(widest_line(line), columns) << line;
    }
}

/// Three holders of three users: A (uid 1500) idle-holds 1 GiB on GPU 0
/// from the start, C (uid 1502) 4 GiB there but busy for its first 4 s, B (uid 1501) 8 GiB on
/// GPU 1 at 80 % SM.
struct ThreeHolders {
    Scene scene;
    std::unique_ptr<Child> a = start_as(1500, "/bin/sleep", {"120"});
    std::unique_ptr<Child> b = start_as(1501, "/bin/sleep", {"120"});
    std::unique_ptr<Child> c = start_as(1502, "/bin/sleep", {"120"});
    std::unique_ptr<Child> daemon;

    void start() {
        ASSERT_TRUE(wait_for_comm(a->pid(), "sleep"));
        ASSERT_TRUE(wait_for_comm(b->pid(), "sleep"));
        ASSERT_TRUE(wait_for_comm(c->pid(), "sleep"));
        scene.hold(a->pid(), 1024, 0, 0);
        scene.hold(b->pid(), 8192, 1, 80);
        scene.hold_series(c->pid(), 4096, 0, {{0, 50}, {4, 0}});
        scene.write("");
        daemon = scene.start_daemon();
        // Past 8 s, C's idle-held memory × time (4096 × (T − 4)) outweighs A's (1024 × T).
        ASSERT_TRUE(eventually(
            [&] {
                return scene.scalar("SELECT count(*) FROM card_tick WHERE gpu_id = "
                                    "(SELECT id FROM gpu WHERE idx = 0)") >= 10;
            },
            30s));
    }
};

// Each key at 80×24 and 200×50, with a refresh interval long enough that every frame after the
// first comes from a key.
TEST(TopE2E, KeysSortFilterHelpAndQuit) {
    GUA_REQUIRE_ROOT();
    ThreeHolders h;
    ASSERT_NO_FATAL_FAILURE(h.start());
    const pid_t a = h.a->pid();
    const pid_t b = h.b->pid();
    const pid_t c = h.c->pid();
    // The user order, from the labels gua gives the uids.
    std::vector<std::pair<std::string, pid_t>> by_user{
        {label(1500), a}, {label(1501), b}, {label(1502), c}};
    std::sort(by_user.begin(), by_user.end());
    const std::vector<pid_t> user_order{by_user[0].second, by_user[1].second, by_user[2].second};
    const std::string keys_footer = "i idle · m memory";
    for (const auto& [rows, columns] :
         std::vector<std::pair<unsigned short, unsigned short>>{{24, 80}, {50, 200}}) {
        SCOPED_TRACE(std::to_string(columns) + "x" + std::to_string(rows));
        PtyTop top({"--db", h.scene.db(), "--interval", "1h"}, rows, columns);
        const auto rows_are = [&](const std::vector<pid_t>& expected) {
            return [expected](const std::vector<std::string>& f) {
                return holder_rows(f) == expected;
            };
        };
        const auto shows = [](const std::string& text) {
            return [text](const std::vector<std::string>& f) {
                return std::any_of(f.begin(), f.end(), [&](const std::string& line) {
                    return line.find(text) != std::string::npos;
                });
            };
        };
        // Default: idle-held memory × time, C then A; B holds nothing idle.
        ASSERT_TRUE(top.frame_until(0, keys_footer, rows_are({c, a, b}), 30s)) << top.output();
        expect_fits(top.last_frame(), rows, columns);
        EXPECT_TRUE(shows("sort: default")(top.last_frame()));
        EXPECT_TRUE(shows("▄")(top.last_frame())) << "GPU 0's history line is idle-held";
        const std::vector<std::pair<std::string, std::vector<pid_t>>> sorts{
            {"i", {a, c, b}},  // idle-held time: A from the start, C from 4 s, B never
            {"m", {b, c, a}},  // 8, 4, 1 GiB
            {"u", user_order}, // user labels
            {"s", {b, c, a}},  // 80 % first, then the default order of the two at 0 %
            {"s", {c, a, b}}}; // the same key again: the default order
        for (const auto& [key, order] : sorts) {
            const std::size_t before = top.frames();
            top.send(key);
            ASSERT_TRUE(top.frame_until(before, keys_footer, rows_are(order), 20s))
                << "after " << key << ":\n"
                << top.output();
            expect_fits(top.last_frame(), rows, columns);
        }
        // Filter to C's user: the other users' rows go.
        std::size_t before = top.frames();
        top.send("/" + label(1502));
        ASSERT_TRUE(top.frame_until(before, "Enter applies", shows("filter users: "), 20s))
            << top.output();
        before = top.frames();
        top.send("\r");
        ASSERT_TRUE(top.frame_until(before, keys_footer, rows_are({c}), 20s)) << top.output();
        EXPECT_TRUE(shows("filter: " + label(1502))(top.last_frame()));
        expect_fits(top.last_frame(), rows, columns);
        // An empty Enter clears it.
        before = top.frames();
        top.send("/");
        ASSERT_TRUE(top.frame_until(before, "Enter applies", shows("filter users: "), 20s));
        before = top.frames();
        top.send("\r");
        ASSERT_TRUE(top.frame_until(before, keys_footer, rows_are({c, a, b}), 20s)) << top.output();
        // An arrow key is ignored (no quit), then ? shows the help and hides it.
        before = top.frames();
        top.send("\x1b[A");
        top.send("?");
        ASSERT_TRUE(top.frame_until(before, keys_footer, shows("Keys (? or Esc closes"), 20s))
            << top.output();
        expect_fits(top.last_frame(), rows, columns);
        before = top.frames();
        top.send("?");
        ASSERT_TRUE(top.frame_until(
            before, keys_footer,
            [&](const std::vector<std::string>& f) { return !shows("Keys (? or")(f); }, 20s));
        // q quits at the first size, a lone Esc at the second.
        top.send(columns == 80 ? "q" : "\x1b");
        const std::optional<int> status = top.wait_exit(20s);
        ASSERT_TRUE(status) << "did not quit";
        EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
        EXPECT_NE(top.output().rfind("\x1b[?25h\x1b[?1049l"), std::string::npos)
            << "terminal restored";
    }
    Scene::stop_daemon(*h.daemon);
}

// A resize redraws at once at the new size (the refresh interval is an hour); Ctrl-C still stops.
TEST(TopE2E, ResizeRedrawsAtTheNewSize) {
    GUA_REQUIRE_ROOT();
    ThreeHolders h;
    ASSERT_NO_FATAL_FAILURE(h.start());
    PtyTop top({"--db", h.scene.db(), "--interval", "1h"}, 50, 200);
    const std::string footer = "i idle · m memory";
    const auto wide = [](const std::vector<std::string>& f) {
        return std::any_of(f.begin(), f.end(),
                           [](const std::string& line) { return widest_line(line) > 150; });
    };
    ASSERT_TRUE(top.frame_until(0, footer, wide, 30s))
        << "the 200-column history line" << top.output();
    expect_fits(top.last_frame(), 50, 200);
    EXPECT_EQ(top.last_frame().size(), 50U) << "the footer on the last row";
    for (const auto& [rows, columns] :
         std::vector<std::pair<unsigned short, unsigned short>>{{24, 80}, {50, 200}}) {
        const std::size_t before = top.frames();
        top.resize(rows, columns);
        ASSERT_TRUE(top.frame_until(
            before, footer, [&](const std::vector<std::string>& f) { return f.size() == rows; },
            20s))
            << top.output();
        expect_fits(top.last_frame(), rows, columns);
        // The history line spans the new width: 5 columns of indent, then one cell per column.
        const std::vector<std::string> frame = top.last_frame();
        EXPECT_TRUE(std::any_of(frame.begin(), frame.end(),
                                [&](const std::string& line) {
                                    return line.rfind("     ", 0) == 0 &&
                                           widest_line(line) == columns &&
                                           line.find("▄") != std::string::npos;
                                }))
            << "a history line " << columns << " wide";
    }
    // Ctrl-C: the terminal's SIGINT still ends it cleanly next to the resize handler.
    top.send("\x03");
    const std::optional<int> status = top.wait_exit(20s);
    ASSERT_TRUE(status) << "Ctrl-C did not stop it";
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
    EXPECT_NE(top.output().rfind("\x1b[?25h\x1b[?1049l"), std::string::npos) << "terminal restored";
    Scene::stop_daemon(*h.daemon);
}

} // namespace
} // namespace gua::policy_e2e
