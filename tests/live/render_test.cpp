// SPDX-License-Identifier: Apache-2.0
// The live view: model building (holders sorted by idle-held memory × time, streaks, states) and
// golden files for the `gua now` text and JSON and a `gua top` frame (tests/golden/README.md).
#include "live/build.hpp"
#include "live/render.hpp"
#include "live/view.hpp"
#include "policy/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gua::live {
namespace {

using policy_test::card;
using policy_test::process;

constexpr TimeUs k_now = 1778486400LL * k_us_per_second; // 2026-05-11T08:00:00Z
constexpr DurationUs k_s = k_us_per_second;

void golden(const std::string& name, const std::string& actual) {
    const std::string path = std::string(GUA_GOLDEN_DIR) + "/" + name;
    if (const char* update = std::getenv("GUA_UPDATE_GOLDEN"); update != nullptr && *update) {
        std::ofstream(path, std::ios::binary) << actual;
        return;
    }
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << "missing " << path << " (run with GUA_UPDATE_GOLDEN=1)";
    std::stringstream expected;
    expected << in.rdbuf();
    EXPECT_EQ(actual, expected.str()) << name;
}

struct Scene {
    std::vector<telemetry::CardTickRecord> records;
    audit::StreakBook book;
    std::map<std::string, audit::StateTimes> recent;
    std::vector<store::DecisionRow> decisions;
    audit::TrendBook trends;
    std::vector<std::vector<audit::StateSpan>> timelines; ///< per record, 30 s ticks

    /// 30 s ticks of GPU `gpu` from `from_s` to `to_s` seconds before k_now, all in one state
    /// (0 active, 1 idle-held, 2 truly idle, 3 unmeasured).
    void ticks(std::size_t gpu, int from_s, int to_s, int state) {
        for (int t = from_s; t > to_s; t -= 30) {
            audit::StateTimes times;
            const std::array<DurationUs*, 4> part{&times.active, &times.idle_held,
                                                  &times.truly_idle, &times.unmeasured};
            *part[static_cast<std::size_t>(state)] = 30 * k_s;
            timelines[gpu].push_back(audit::StateSpan{k_now - t * k_s, 30 * k_s, times});
        }
    }

    Scene() {
        telemetry::ProcessTick notebook = process(4242, 4200, 8294, 0.0, "alice", 1500);
        notebook.identity.jupyter_kernel = "3f2a9c1e-0000-4000-8000-000000000000";
        telemetry::ProcessTick job = process(5151, 5100, 30000, 93.0, "bob", 1501);
        job.identity.slurm_job = "4711";
        telemetry::ProcessTick small = process(6161, 6100, 512, 0.0, "carol", 1502);
        small.identity.container_id = "c0ffee0123456789abcdef";
        telemetry::ProcessTick xorg = process(900, 9000, 64, std::nullopt, "root", 0);
        xorg.type = telemetry::ProcessType::graphics;
        xorg.identity.command = "Xorg";
        records = {card(0, 0, 30 * k_s, {notebook, xorg}), card(1, 93, 30 * k_s, {job, small}),
                   card(2, 0, 30 * k_s, {})};
        book.seed({records[0].device.uuid, {4242, 4200}},
                  audit::Streak{k_now - 8000 * k_s, k_now, 7980 * k_s});
        book.seed({records[1].device.uuid, {6161, 6100}},
                  audit::Streak{k_now - 600 * k_s, k_now, 600 * k_s});
        // bob's job grew by 100 MiB every 30 s for the last ten minutes, up to its 30,000 MiB.
        for (int k = 0; k <= 20; ++k) {
            trends.add({records[1].device.uuid, {5151, 5100}},
                       audit::MemorySample{k_now - (20 - k) * 30 * k_s, 28000 + 100 * k});
        }
        // carol's small holding stayed flat.
        for (int k = 0; k <= 20; ++k) {
            trends.add({records[1].device.uuid, {6161, 6100}},
                       audit::MemorySample{k_now - (20 - k) * 30 * k_s, 512});
        }
        // The last ten minutes: GPU 0 had no daemon for 2 minutes, was active for one, then
        // idle-held; GPU 1 was active; GPU 2 truly idle but for one unmeasured tick.
        timelines.resize(3);
        ticks(0, 480, 420, 0);
        ticks(0, 420, 0, 1);
        ticks(1, 600, 0, 0);
        ticks(2, 600, 300, 2);
        ticks(2, 300, 270, 3);
        ticks(2, 270, 0, 2);
        recent[records[0].device.uuid] = audit::StateTimes{60 * k_s, 480 * k_s, 60 * k_s, 0};
        recent[records[1].device.uuid] = audit::StateTimes{600 * k_s, 0, 0, 0};
        recent[records[2].device.uuid] = audit::StateTimes{0, 0, 600 * k_s, 0};
        store::DecisionRow d;
        d.time_us = k_now - 1200 * k_s;
        d.rule = "warn-2h";
        d.action = "notify";
        d.dry_run = false;
        d.verdict = "act";
        d.outcome = "notified";
        d.pid = 4242;
        d.user = "alice";
        d.command = "python3";
        d.gpu_index = "0";
        d.memory_mib = 8294;
        d.idle_us = 7200 * k_s;
        decisions.push_back(d);
        d.time_us = k_now - 60 * k_s;
        d.rule = "reclaim-8h";
        d.action = "terminate";
        d.dry_run = true;
        d.verdict = "dry-run";
        d.outcome = "dry-run";
        d.pid = 7000;
        d.user = "dave";
        d.idle_us = 8 * 3600 * k_s;
        decisions.push_back(d);
    }

    NowModel build(NowModel header) const {
        std::vector<audit::CardNow> cards;
        for (const auto& r : records) {
            cards.push_back(audit::CardNow{k_now - 30 * k_s, 30 * k_s, &r});
        }
        NowModel m = build_now(std::move(header), cards, book, recent, decisions,
                               audit::Thresholds{}, trends);
        for (std::size_t i = 0; i < m.gpus.size(); ++i) {
            m.gpus[i].timeline = timelines[i];
        }
        return m;
    }
};

NowModel daemon_header() {
    NowModel m;
    m.now = k_now + 2 * k_s;
    m.host = "gpu-node-07";
    m.origin = Origin::daemon;
    m.db_path = "/var/lib/gua/gua.db";
    m.last_tick_end = k_now;
    m.interval_us = 30 * k_s;
    m.recent_window_us = 600 * k_s;
    m.decisions_window_us = 24 * 3600 * k_s;
    m.history_us = 600 * k_s;
    return m;
}

TEST(LiveNow, HoldersWorstFirstWithTheirStreaks) {
    const NowModel m = Scene().build(daemon_header());
    ASSERT_EQ(m.gpus.size(), 3U);
    EXPECT_EQ(m.gpus[0].state, "idle-held");
    EXPECT_EQ(m.gpus[1].state, "active");
    EXPECT_EQ(m.gpus[2].state, "truly-idle");
    EXPECT_DOUBLE_EQ(m.gpus[0].recent.idle_held, 0.8);
    ASSERT_EQ(m.holders.size(), 3U) << "Xorg (graphics) is no holder";
    EXPECT_EQ(m.holders[0].pid, 4242U);
    EXPECT_TRUE(m.holders[0].idle_held);
    EXPECT_EQ(m.holders[0].idle_us, 7980 * k_s);
    EXPECT_EQ(m.holders[0].idle_since, k_now - 8000 * k_s);
    EXPECT_EQ(m.holders[1].pid, 6161U) << "idle on an active card (its own SMs are cold)";
    EXPECT_EQ(m.holders[1].idle_us, 600 * k_s);
    EXPECT_EQ(m.holders[2].pid, 5151U);
    EXPECT_FALSE(m.holders[2].idle_held);
    ASSERT_EQ(m.decisions.size(), 2U);
    EXPECT_EQ(m.decisions[0].rule, "reclaim-8h") << "newest first";
}

TEST(LiveNow, GrowingMemoryGetsATimeToFull) {
    const NowModel m = Scene().build(daemon_header());
    ASSERT_EQ(m.holders.size(), 3U);
    const HolderNow& job = m.holders[2];
    ASSERT_EQ(job.pid, 5151U);
    ASSERT_TRUE(job.mem_trend_mib_per_hour && job.time_to_full_us);
    EXPECT_NEAR(*job.mem_trend_mib_per_hour, 100.0 * 120, 1e-6); // 100 MiB per 30 s
    // GPU 1 holds 30,000 + 512 of 81,559 MiB: the free 51,047 MiB last 51,047 / 12,000 hours.
    EXPECT_NEAR(static_cast<double>(*job.time_to_full_us) / static_cast<double>(k_us_per_hour),
                51047.0 / 12000.0, 1e-6);
    const HolderNow& flat = m.holders[1];
    ASSERT_EQ(flat.pid, 6161U);
    ASSERT_TRUE(flat.mem_trend_mib_per_hour);
    EXPECT_EQ(*flat.mem_trend_mib_per_hour, 0.0);
    EXPECT_FALSE(flat.time_to_full_us) << "flat memory never fills the card";
    EXPECT_FALSE(m.holders[0].mem_trend_mib_per_hour) << "no readings: no trend";
}

TEST(LiveNow, GoldenText) {
    golden("now-daemon.txt", render_now_text(Scene().build(daemon_header()), {}));
}

TEST(LiveNow, GoldenJson) {
    NowModel m = Scene().build(daemon_header());
    slice_history(m, k_json_history_slices);
    golden("now-daemon.json", render_now_json(m));
}

// `gua top`'s frame: host CPU % and RSS per holder (set here as CpuMeter would), one row selected.
TEST(LiveNow, GoldenSampledTopFrame) {
    NowModel h = daemon_header();
    h.origin = Origin::sampled;
    h.db_path.clear();
    h.note = "no daemon is recording; sampled NVML directly for 3s";
    h.recent_window_us = 3 * k_s;
    Scene scene;
    scene.decisions.clear();
    NowModel m = scene.build(h);
    slice_history(m, history_cells(0));
    ASSERT_GE(m.holders.size(), 2U);
    m.holders[0].cpu_pct = 0.4;
    m.holders[0].rss_kib = 3 * 1024 * 1024 + 300;
    m.holders[1].cpu_pct = 187.2;
    m.holders[1].rss_kib = 14 * 1024 * 1024;
    m.host_columns = true;
    m.selected_pid = m.holders[1].pid;
    golden("top-sampled.txt", render_top_frame(m, {}, {false, 20, 8, 0, true}, 2 * k_s, 0));
}

TEST(LiveNow, GoldenTopFrameOnAnEightyByTwentyFourTerminal) {
    NowModel m = Scene().build(daemon_header());
    slice_history(m, history_cells(80));
    golden("top-80x24.txt", render_top_frame(m, {}, {false, 20, 8, 80, true}, 2 * k_s, 24));
}

std::string cells(const std::string& glyph, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) {
        out += glyph;
    }
    return out;
}

TEST(LiveNow, HistoryLineCellsFollowTheTimeline) {
    NowModel m = Scene().build(daemon_header());
    slice_history(m, 60); // 10 s per cell over the ten minutes before k_now
    const std::string text = render_now_text(m, {false, 20, 8, 0, true});
    // GPU 0: 120 s without ticks (12 cells), 60 s active (6), 420 s idle-held (42).
    const std::string gpu0 = "\n     " + cells("·", 12) + cells("█", 6) + cells("▄", 42) + "\n";
    const std::string gpu1 = "\n     " + cells("█", 60) + "\n";
    // GPU 2: 300 s truly idle (30), one unmeasured 30 s tick (3), 270 s truly idle (27).
    const std::string gpu2 = "\n     " + cells("▁", 30) + cells("×", 3) + cells("▁", 27) + "\n";
    EXPECT_NE(text.find(gpu0), std::string::npos) << text;
    EXPECT_NE(text.find(gpu1), std::string::npos) << text;
    EXPECT_NE(text.find(gpu2), std::string::npos) << text;
    EXPECT_LT(text.find("  0  NVIDIA"), text.find(gpu0)) << "under its GPU";
    EXPECT_LT(text.find(gpu0), text.find("  1  NVIDIA"));
    EXPECT_NE(text.find("     last 10m: █ active ▄ idle-held ▁ truly idle × unmeasured · none\n"),
              std::string::npos);
    const std::string plain = render_now_text(m, {});
    EXPECT_EQ(plain.find("▄"), std::string::npos) << "gua now's text has no history line";
    const std::string colour = render_now_text(m, {true, 20, 8, 0, true});
    EXPECT_NE(colour.find("\x1b[33m" + cells("▄", 42) + "\x1b[0m"), std::string::npos)
        << "one colour per run of a state";
}

TEST(LiveNow, JsonRecentStatesPerSlice) {
    NowModel m = Scene().build(daemon_header());
    slice_history(m, k_json_history_slices);
    const nlohmann::json j = nlohmann::json::parse(render_now_json(m));
    EXPECT_EQ(j.at("history").at("window_seconds"), 600.0);
    EXPECT_EQ(j.at("history").at("slice_seconds"), 30.0);
    EXPECT_EQ(j.at("history").at("end"), "2026-05-11T08:00:00Z");
    const nlohmann::json& gpu0 = j.at("gpus").at(0).at("recent_states");
    ASSERT_EQ(gpu0.size(), 20U);
    // 30 s slices align with GPU 0's ticks: 4 without data, 2 active, 14 idle-held.
    for (std::size_t k = 0; k < 20; ++k) {
        const std::string expected = k < 4 ? "no-data" : k < 6 ? "active" : "idle-held";
        EXPECT_EQ(gpu0.at(k).at("state"), expected) << k;
    }
    EXPECT_EQ(gpu0.at(0).at("start"), "2026-05-11T07:50:00Z");
    EXPECT_EQ(gpu0.at(0).at("no_data_seconds"), 30.0);
    EXPECT_EQ(gpu0.at(4).at("active_seconds"), 30.0);
    EXPECT_EQ(gpu0.at(19).at("idle_held_seconds"), 30.0);
    EXPECT_EQ(gpu0.at(19).at("start"), "2026-05-11T07:59:30Z");
    const nlohmann::json& gpu2 = j.at("gpus").at(2).at("recent_states");
    EXPECT_EQ(gpu2.at(10).at("state"), "unmeasured") << "the tick 300 s before the end";
    EXPECT_EQ(gpu2.at(10).at("unmeasured_seconds"), 30.0);
    NowModel none = daemon_header();
    none.last_tick_end.reset();
    none.gpus.push_back(GpuNow{});
    slice_history(none, k_json_history_slices);
    const nlohmann::json empty = nlohmann::json::parse(render_now_json(none));
    EXPECT_TRUE(empty.at("gpus").at(0).at("recent_states").empty()) << "no tick, no slices";
    EXPECT_TRUE(empty.at("history").at("slice_seconds").is_null());
}

TEST(LiveNow, ColourOnlyWhenAsked) {
    const NowModel m = Scene().build(daemon_header());
    EXPECT_EQ(render_now_text(m, {}).find('\x1b'), std::string::npos);
    EXPECT_NE(render_now_text(m, {true, 20, 8}).find("\x1b[33m"), std::string::npos);
}

/// Columns a rendered line takes: code points outside ANSI escape sequences.
int columns_of(const std::string& line) {
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

TEST(LiveNow, ClipsEveryLineToTheTerminal) {
    EXPECT_EQ(clip_to_columns("abcdef", 6), "abcdef");
    EXPECT_EQ(clip_to_columns("abcdefg", 6), "abcde…");
    EXPECT_EQ(clip_to_columns("a▒▒▒▒b", 6), "a▒▒▒▒b") << "one column per code point";
    EXPECT_EQ(clip_to_columns("a▒▒▒▒bc", 6), "a▒▒▒▒…");
    EXPECT_EQ(clip_to_columns("\x1b[33mabcdefg\x1b[0m", 4), "\x1b[33mabc…\x1b[0m");
    EXPECT_EQ(clip_to_columns("abcdefg", 0), "abcdefg");
    NowModel m = Scene().build(daemon_header());
    m.holders[0].command_line = "python3 train.py --lr 3e-4 --epochs 100 --data /srv/data/imagenet";
    for (const int width : {40, 80, 200}) {
        for (const bool color : {false, true}) {
            const std::string text = render_now_text(m, {color, 20, 8, width});
            std::size_t lines = 0;
            for (std::size_t at = 0; at < text.size(); at = text.find('\n', at) + 1) {
                const std::string line = text.substr(at, text.find('\n', at) - at);
                EXPECT_LE(columns_of(line), width) << line;
                ++lines;
            }
            EXPECT_EQ(lines, static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')));
            const bool whole = text.find("--data /srv/data/imagenet") != std::string::npos;
            EXPECT_EQ(whole, width == 200) << width;
        }
    }
    EXPECT_NE(render_now_text(m, {}).find("--data /srv/data/imagenet"), std::string::npos)
        << "no terminal, no limit";
}

/// The where column of `h`: the 22 columns after the pid in its holder line.
std::string where_of(const HolderNow& h) {
    NowModel m;
    m.holders.push_back(h);
    const std::string text = render_now_text(m, {});
    const std::string pid = " " + std::to_string(h.pid) + "  ";
    const std::size_t at = text.find(pid, text.find("command\n"));
    if (at == std::string::npos) {
        return "(no holder line)";
    }
    std::string rest = text.substr(at + pid.size());
    rest = rest.substr(0, rest.find("  ")); // the column is followed by two spaces at least
    return rest;
}

TEST(LiveNow, WhereNamesPodsAndContainersAndEscapesThem) {
    HolderNow h;
    h.pid = 77;
    h.user = "root";
    h.pod_uid = "0c1d2e3f-4a5b-4c6d-8e7f-0123456789ab";
    h.container_id = std::string(64, 'a');
    EXPECT_EQ(where_of(h), "container:aaaaaaaaaaaa") << "no names: the ids, as before";
    h.pod_namespace = "ml";
    h.pod_name = "train-0";
    EXPECT_EQ(where_of(h), "pod:ml/train-0");
    h.container_name = "gpu";
    EXPECT_EQ(where_of(h), "pod:ml/train-0/gpu");
    h.container_name = "trainer-with-a-long-name";
    EXPECT_EQ(where_of(h), "pod:ml/train-0/traine…") << "cut to 22 columns, and says so";
    HolderNow docker;
    docker.pid = 78;
    docker.container_id = std::string(64, 'b');
    docker.container_name = "llm-serve";
    EXPECT_EQ(where_of(docker), "container:llm-serve");
    docker.container_name = "\x1b[2J\t";
    EXPECT_EQ(where_of(docker), "container:\\x1b[2J\\x09");
    NowModel m;
    m.holders.push_back(docker);
    const std::string json = render_now_json(m);
    EXPECT_NE(json.find(R"("container_name": "\u001b[2J\t")"), std::string::npos) << json;
    EXPECT_EQ(json.find('\x1b'), std::string::npos);
}

} // namespace
} // namespace gua::live
