// SPDX-License-Identifier: Apache-2.0
// `gua top`'s view: the holder sorts and the user filter (arrange_holders), and the frame on a
// terminal — exactly its rows, header first, footer last, every line within the width, help.
#include "live/build.hpp"
#include "live/render.hpp"
#include "live/view.hpp"

#include <gtest/gtest.h>

namespace gua::live {
namespace top_frame_test { // named after the file: unique in a unity batch

constexpr DurationUs k_sec = k_us_per_second;

HolderNow row(std::uint32_t pid, const std::string& user, std::optional<std::int64_t> mib,
              std::optional<double> sm, DurationUs idle_s) {
    HolderNow h;
    h.pid = pid;
    h.user = user;
    h.command = "python3";
    h.mem_mib = mib;
    h.sm_pct = sm;
    h.idle_held = idle_s > 0;
    h.idle_us = idle_s * k_sec;
    return h;
}

/// Four holders in the order build_now would give them (the standard order).
NowModel holders_model() {
    NowModel m;
    m.holders = {row(11, "dave", 20000, 0.0, 100), row(22, "Alice", 1000, 0.0, 5000),
                 row(33, "bob", 40000, 95.0, 0), row(44, "carol", std::nullopt, std::nullopt, 50)};
    return m;
}

std::vector<std::uint32_t> pids(const NowModel& m) {
    std::vector<std::uint32_t> out;
    for (const HolderNow& h : m.holders) {
        out.push_back(h.pid);
    }
    return out;
}

std::vector<std::uint32_t> arranged(HolderSort sort, const std::string& filter = "") {
    NowModel m = holders_model();
    TopView v;
    v.sort = sort;
    v.filter = filter;
    arrange_holders(m, v);
    return pids(m);
}

TEST(TopView, SortsHolders) {
    using P = std::vector<std::uint32_t>;
    EXPECT_EQ(arranged(HolderSort::standard), (P{11, 22, 33, 44}));
    // Idle-held 5000 s, 100 s, 50 s; bob is not idle-held.
    EXPECT_EQ(arranged(HolderSort::idle), (P{22, 11, 44, 33}));
    // 40000, 20000, 1000 MiB; unknown memory last.
    EXPECT_EQ(arranged(HolderSort::memory), (P{33, 11, 22, 44}));
    // 95 %, then the two at 0 % in the standard order, n/a last.
    EXPECT_EQ(arranged(HolderSort::sm), (P{33, 11, 22, 44}));
    // "Alice" < "bob" < "carol" < "dave" (byte order).
    EXPECT_EQ(arranged(HolderSort::user), (P{22, 33, 44, 11}));
}

TEST(TopView, FiltersUsersCaseInsensitively) {
    using P = std::vector<std::uint32_t>;
    EXPECT_EQ(arranged(HolderSort::standard, "A"), (P{11, 22, 44})) << "dave, Alice, carol";
    EXPECT_EQ(arranged(HolderSort::user, "a"), (P{22, 44, 11}));
    EXPECT_EQ(arranged(HolderSort::standard, "zed"), P{});
    NowModel m = holders_model();
    TopView v;
    v.sort = HolderSort::memory;
    v.filter = "BOB";
    arrange_holders(m, v);
    EXPECT_EQ(m.holders_hidden, 3U);
    const std::string text = render_now_text(m, {});
    EXPECT_NE(text.find("Holders (most memory first; users containing \"BOB\", 3 hidden)\n"),
              std::string::npos)
        << text;
    v.filter = "nobody";
    NowModel none = holders_model();
    arrange_holders(none, v);
    EXPECT_NE(render_now_text(none, {}).find("  (no holder of a user containing \"nobody\")\n"),
              std::string::npos);
}

/// The frame's lines (split at newlines; a frame for a terminal has no final newline).
std::vector<std::string> frame_lines(const std::string& frame) {
    std::vector<std::string> out;
    std::size_t at = 0;
    for (std::size_t end = frame.find('\n'); end != std::string::npos;
         at = end + 1, end = frame.find('\n', at)) {
        out.push_back(frame.substr(at, end - at));
    }
    out.push_back(frame.substr(at));
    return out;
}

int width_of(const std::string& line) {
    int n = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (line[i] == '\x1b') {
            i = line.find('m', i);
            continue;
        }
        n += (static_cast<unsigned char>(line[i]) & 0xC0) != 0x80 ? 1 : 0;
    }
    return n;
}

/// A model with `n` holders and two GPUs with a history.
NowModel busy_model(int n) {
    NowModel m;
    m.now = 1778486400LL * k_sec;
    m.last_tick_end = m.now;
    m.history_us = 600 * k_sec;
    m.host = "gpu-node-07";
    for (int g = 0; g < 2; ++g) {
        GpuNow gpu;
        gpu.index = g;
        gpu.model = "NVIDIA H100 80GB HBM3";
        gpu.state = "idle-held";
        gpu.timeline.push_back(audit::StateSpan{m.now - 300 * k_sec, 300 * k_sec,
                                                audit::StateTimes{0, 300 * k_sec, 0, 0}});
        m.gpus.push_back(gpu);
    }
    for (int i = 0; i < n; ++i) {
        HolderNow h =
            row(static_cast<std::uint32_t>(1000 + i), "user" + std::to_string(i), 1024, 0.0, 60);
        h.command_line = "python3 train.py --a-rather-long-argument-list " + std::string(150, 'x');
        m.holders.push_back(h);
    }
    return m;
}

TEST(TopFrame, FillsTheTerminalExactly) {
    for (const auto& [rows, columns] :
         std::vector<std::pair<int, int>>{{24, 80}, {50, 200}, {12, 40}, {3, 30}, {1, 30}}) {
        for (const bool color : {false, true}) {
            NowModel m = busy_model(20);
            slice_history(m, history_cells(columns));
            const std::string frame =
                render_top_frame(m, {}, {color, 20, 8, columns, true}, 2 * k_sec, rows);
            const std::vector<std::string> lines = frame_lines(frame);
            ASSERT_EQ(lines.size(), static_cast<std::size_t>(rows)) << frame;
            for (const std::string& line : lines) {
                EXPECT_LE(width_of(line), columns) << line;
            }
            EXPECT_EQ(lines.front().rfind("gua top — refresh every 2s", 0), 0U) << lines.front();
            if (rows > 1) {
                EXPECT_EQ(lines.back().rfind("i idle · m memory", 0), 0U) << "footer last";
            }
            if (rows == 24) {
                // 20 holders do not fit in 22 body rows: cut, and said so.
                EXPECT_EQ(lines[rows - 2].rfind("… ", 0), 0U) << lines[rows - 2];
                EXPECT_NE(lines[rows - 2].find("more lines"), std::string::npos);
            }
            if (rows == 50) {
                EXPECT_NE(frame.find("user19"), std::string::npos) << "all fit";
            }
        }
    }
}

TEST(TopFrame, HistoryLineFillsTheWidth) {
    for (const int columns : {85, 205}) { // an even number of cells: the midpoint is a boundary
        NowModel m = busy_model(1);
        slice_history(m, history_cells(columns));
        ASSERT_EQ(m.gpus[0].recent_states.size(), static_cast<std::size_t>(columns - 5));
        const std::string frame =
            render_top_frame(m, {}, {false, 20, 8, columns, true}, 2 * k_sec, 50);
        // Idle-held for the newer half of the ten minutes: the right half of the cells.
        const int cells = columns - 5;
        const int held = cells / 2;
        std::string expected = "     ";
        for (int i = 0; i < cells; ++i) {
            expected += i < cells - held ? "·" : "▄";
        }
        EXPECT_NE(frame.find("\n" + expected + "\n"), std::string::npos) << frame;
    }
}

TEST(TopFrame, HeaderShowsSortAndFilterFooterThePrompt) {
    NowModel m = busy_model(3);
    TopView v;
    v.sort = HolderSort::memory;
    v.filter = "user1";
    arrange_holders(m, v);
    std::vector<std::string> lines =
        frame_lines(render_top_frame(m, v, {false, 20, 8, 120, false}, 2 * k_sec, 30));
    EXPECT_EQ(lines.front(), "gua top — refresh every 2s · sort: memory · filter: user1 · ? help · "
                             "q quits");
    v.editing = true;
    v.draft = "us\x1b";
    lines = frame_lines(render_top_frame(m, v, {false, 20, 8, 120, false}, 2 * k_sec, 30));
    EXPECT_EQ(lines.back(), "filter users: us\\x1b▏ (Enter applies, Esc clears)")
        << "typed control characters are shown escaped";
}

TEST(TopFrame, HelpOverTheTable) {
    NowModel m = busy_model(3);
    TopView v;
    v.help = true;
    const std::string frame = render_top_frame(m, v, {false, 20, 8, 80, false}, 2 * k_sec, 24);
    const std::vector<std::string> lines = frame_lines(frame);
    ASSERT_EQ(lines.size(), 24U);
    EXPECT_EQ(lines.front().rfind("gua top —", 0), 0U);
    EXPECT_EQ(lines[2], "Keys (? or Esc closes this help)");
    for (const std::string key : {"  i ", "  m ", "  s ", "  u ", "  / ", "  ? ", "  q  Esc"}) {
        EXPECT_NE(frame.find("\n" + key), std::string::npos) << key;
    }
    for (const std::string& line : lines) {
        EXPECT_LE(width_of(line), 80) << line;
    }
}

} // namespace top_frame_test
} // namespace gua::live
