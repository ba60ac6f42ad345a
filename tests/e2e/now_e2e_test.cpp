// `gua now` and `gua top` end to end: idle-held durations from the daemon's database, continued
// across a daemon restart and by gua's own sampling when no daemon records; `gua top` in a
// pseudo-terminal (render, q quits, terminal restored) and as plain frames.
#include "e2e/policy_harness.hpp"
#include "support/run.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>

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

/// `gua top` in a pseudo-terminal: the output so far, keys to send, and its exit.
class PtyTop {
  public:
    explicit PtyTop(const std::vector<std::string>& args, unsigned short rows = 40,
                    unsigned short columns = 120) {
        std::vector<std::string> argv{GUA_BINARY, "top"};
        argv.insert(argv.end(), args.begin(), args.end());
        std::vector<char*> c;
        for (const std::string& a : argv) {
            c.push_back(const_cast<char*>(a.c_str()));
        }
        c.push_back(nullptr);
        winsize ws{rows, columns, 0, 0};
        m_pid = ::forkpty(&m_master, nullptr, nullptr, &ws);
        if (m_pid == 0) {
            ::setenv("NO_COLOR", "1", 1);
            ::execv(c[0], c.data());
            ::_exit(127);
        }
        m_child = Child::adopt(m_pid);
    }
    ~PtyTop() {
        m_child.reset();
        if (m_master >= 0) {
            ::close(m_master);
        }
    }
    PtyTop(const PtyTop&) = delete;
    PtyTop& operator=(const PtyTop&) = delete;

    /// Reads until the output contains `text` (true) or `timeout` passes.
    bool read_until(const std::string& text, std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (m_out.find(text) == std::string::npos &&
               std::chrono::steady_clock::now() < deadline) {
            pump(100);
        }
        return m_out.find(text) != std::string::npos;
    }
    void send(const std::string& keys) const {
        EXPECT_EQ(::write(m_master, keys.data(), keys.size()), static_cast<ssize_t>(keys.size()));
    }
    /// Waits for the exit while draining the terminal; the wait status, nullopt on timeout.
    std::optional<int> wait_exit(std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < deadline) {
            pump(50);
            if (auto status = m_child->wait_exit(0ms)) {
                pump(50);
                return status;
            }
        }
        return std::nullopt;
    }
    const std::string& output() const { return m_out; }

  private:
    void pump(int timeout_ms) {
        pollfd p{m_master, POLLIN, 0};
        if (::poll(&p, 1, timeout_ms) > 0) {
            char buffer[4096];
            const ssize_t n = ::read(m_master, buffer, sizeof buffer);
            if (n > 0) {
                m_out.append(buffer, static_cast<std::size_t>(n));
            }
        }
    }

    int m_master = -1;
    pid_t m_pid = -1;
    std::unique_ptr<Child> m_child;
    std::string m_out;
};

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
    EXPECT_NE(top.output().find("gua top — refresh every 1s, q quits"), std::string::npos);
    EXPECT_NE(top.output().find("▒"), std::string::npos) << "the three-state bar";
    top.send("q");
    const std::optional<int> status = top.wait_exit(5s);
    ASSERT_TRUE(status) << "q did not quit";
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
    const std::string& out = top.output();
    EXPECT_NE(out.rfind("\x1b[?25h\x1b[?1049l"), std::string::npos) << "terminal restored";
    Scene::stop_daemon(*daemon);
}

/// The widest line of terminal output: code points outside escape sequences, lines split at LF.
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

} // namespace
} // namespace gua::policy_e2e
