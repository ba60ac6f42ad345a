// SPDX-License-Identifier: Apache-2.0
// `gua report --group-by job` as CSV (`--table identities`) and HTML: a Slurm job over two cards
// (one busy, one idle and for half an hour held by another user's process) and a pod on the idle
// card, recorded through the writer; each format's figures against the ones integrated here from
// the scenario, and the HTML's marked numbers against the JSON report (in headless Chromium too,
// when it is installed).
#include "store/database.hpp"
#include "store/schema.hpp"
#include "store/two_card_recording.hpp"
#include "support/chromium.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <regex>

namespace gua::report {
namespace jobs_formats_test { // named after the file: unique in a unity batch

using nlohmann::json;

constexpr TimeUs k_start = 1777593600LL * k_us_per_second; // 2026-05-01T00:00:00Z
constexpr DurationUs k_s = k_us_per_second;
constexpr DurationUs k_tick = 60 * k_s;
constexpr int k_ticks = 120;
constexpr double k_price = 2.5; // per GPU-hour, --price

/// Job 7 (alice) holds both cards from 20 s into tick 0 to 30 s into tick 100; pod ml/train card 1
/// over ticks 105–114. Card 0 is busy throughout; card 1 idle, held by bob's idle process over
/// ticks 60–89, else not held.
telemetry::CardTickRecord card(int index, TimeUs t0, int k) {
    telemetry::CardTickRecord c;
    c.device = telemetry::DeviceInfo{
        index == 0 ? "GPU-a" : "GPU-b", index, "NVIDIA H100 80GB HBM3", 81559, "", ""};
    c.util_source = telemetry::UtilSource::samples;
    const bool held = index == 1 && k >= 60 && k < 90;
    c.util_pct = index == 0 ? 80 : 0;
    c.active_us = index == 0 ? k_tick : 0;
    c.bucket_us = index == 0 ? std::array<DurationUs, 4>{0, 0, k_tick, 0}
                             : std::array<DurationUs, 4>{k_tick, 0, 0, 0};
    c.idle_unlisted_us = index == 1 && !held ? k_tick : 0;
    if (index == 0 || held) {
        telemetry::ProcessTick p;
        p.pid = index == 0 ? 4000 : 5000;
        p.start_ticks = 1;
        p.identity.user = index == 0 ? "alice" : "bob";
        p.identity.command = index == 0 ? "train" : "notebook";
        p.mem_used_mib = 8000;
        p.sm_util_pct = index == 0 ? 80 : 0;
        p.active_us = index == 0 ? k_tick : 0;
        if (held) {
            p.idle_held_us = k_tick;
        }
        c.processes.push_back(p);
    }
    TimeUs begin = 0;
    TimeUs end = 0;
    std::string kind = "slurm-job";
    std::string id;
    if (k <= 100) {
        id = "7";
        begin = k == 0 ? t0 + 20 * k_s : t0;
        end = k == 100 ? t0 + 30 * k_s : t0 + k_tick;
    } else if (index == 1 && k >= 105 && k < 115) {
        kind = "pod";
        id = "ml/train";
        begin = t0;
        end = t0 + k_tick;
    }
    if (!id.empty()) {
        const DurationUs d = end - begin;
        c.allocation = index == 0 ? telemetry::AllocationTimes{d, d, 0, 0, 0, 0}
                       : held     ? telemetry::AllocationTimes{d, 0, d, 0, 0, 0}
                                  : telemetry::AllocationTimes{d, 0, 0, d, 0, 0};
        c.allocations = {telemetry::AllocationOwner{kind, id, kind == "pod" ? "" : "alice",
                                                    kind == "pod" ? "ml" : "physics", begin, end}};
    }
    return c;
}

/// The figures of one job, in GPU-hours and cents, integrated from the scenario above.
struct Expected {
    std::string id, kind, owner, owner_kind;
    int gpus = 0;
    double allocated = 0, active = 0, idle_held = 0, unused = 0;
    std::int64_t cost_cents = 0;
};

std::vector<Expected> expected() {
    const double h = 3600.0;
    const double job7_card = (40.0 + 99 * 60.0 + 30.0) / h; // each card
    const double held = 30 * 60.0 / h;                      // ticks 60–89, inside job 7
    const double pod = 10 * 60.0 / h;
    // Priced per card, each card's cents rounded.
    const auto cents = [](double hours) { return std::llround(hours * k_price * 100.0); };
    return {Expected{"7", "slurm-job", "alice", "user", 2, 2 * job7_card, job7_card, held,
                     job7_card - held, 2 * cents(job7_card)},
            Expected{"ml/train", "pod", "ml", "namespace", 1, pod, 0, 0, pod, cents(pod)}};
}

/// A minimal RFC 4180 reader: records of fields, CRLF ends, "" inside quotes.
std::vector<std::vector<std::string>> csv_records(const std::string& text) {
    std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
    bool quoted = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted && c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
            rows.back().back() += '"';
            ++i;
        } else if (c == '"') {
            quoted = !quoted;
        } else if (!quoted && c == ',') {
            rows.back().emplace_back();
        } else if (!quoted && c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
            ++i;
            rows.emplace_back(1);
        } else {
            rows.back().back() += c;
        }
    }
    EXPECT_EQ(rows.back(), std::vector<std::string>(1)) << "no CRLF after the last record";
    rows.pop_back();
    return rows;
}

/// data-field → data-value of every number the page marks.
std::map<std::string, double> marked(const std::string& html) {
    static const std::regex k_marked(R"re(data-field="([^"]*)" data-value="([^"]*)")re");
    std::map<std::string, double> out;
    for (auto it = std::sregex_iterator(html.begin(), html.end(), k_marked);
         it != std::sregex_iterator(); ++it) {
        out[(*it)[1]] = std::stod((*it)[2]);
    }
    return out;
}

class JobsFormats : public ::testing::Test {
  protected:
    void SetUp() override {
        store::Database db(m_dir.file("gua.db"), store::OpenMode::create);
        store::migrate(db);
        testing::record_two_cards(db, k_start, k_tick, k_ticks, card);
    }
    test::RunResult report(const std::vector<std::string>& format) const {
        std::vector<std::string> args{"report",
                                      "--db",
                                      m_dir.file("gua.db"),
                                      "--from",
                                      "2026-05-01T00:00:00Z",
                                      "--to",
                                      "2026-05-01T02:00:00Z",
                                      "--price",
                                      "2.50",
                                      "--group-by",
                                      "job"};
        args.insert(args.end(), format.begin(), format.end());
        return test::run_gua(args);
    }
    test::TempDir m_dir;
};

TEST_F(JobsFormats, CsvIdentitiesTableIsTheJobsWithTheIntegratedFigures) {
    const test::RunResult r = report({"--format", "csv", "--table", "identities"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto rows = csv_records(r.out);
    ASSERT_EQ(rows.size(), 3U) << r.out;
    EXPECT_EQ(rows[0],
              (std::vector<std::string>{
                  "job", "kind", "owner", "owner_kind", "gpus_allocated", "allocated_gpu_hours",
                  "active_gpu_hours", "idle_held_gpu_hours", "allocated_unused_gpu_hours",
                  "unmeasured_gpu_hours", "currency", "cost", "from_summary"}));
    const std::vector<Expected> want = expected();
    for (std::size_t i = 0; i < want.size(); ++i) {
        const std::vector<std::string>& row = rows[i + 1];
        const Expected& e = want[i];
        SCOPED_TRACE(e.id);
        ASSERT_EQ(row.size(), 13U);
        EXPECT_EQ(row[0], e.id);
        EXPECT_EQ(row[1], e.kind);
        EXPECT_EQ(row[2], e.owner);
        EXPECT_EQ(row[3], e.owner_kind);
        EXPECT_EQ(row[4], std::to_string(e.gpus));
        EXPECT_NEAR(std::stod(row[5]), e.allocated, 1e-9);
        EXPECT_NEAR(std::stod(row[6]), e.active, 1e-9);
        EXPECT_NEAR(std::stod(row[7]), e.idle_held, 1e-9);
        EXPECT_NEAR(std::stod(row[8]), e.unused, 1e-9);
        EXPECT_NEAR(std::stod(row[9]), 0.0, 1e-9);
        EXPECT_EQ(row[10], "USD");
        EXPECT_EQ(row[11], fmt::format("{}.{:02d}", e.cost_cents / 100, e.cost_cents % 100));
        EXPECT_EQ(row[12], "false");
    }
    // Without --group-by job the table is the identities, as before.
    const test::RunResult plain = test::run_gua(
        {"report", "--db", m_dir.file("gua.db"), "--format", "csv", "--table", "identities",
         "--from", "2026-05-01T00:00:00Z", "--to", "2026-05-01T02:00:00Z"});
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_EQ(csv_records(plain.out).at(0).at(0), "identity");
}

TEST_F(JobsFormats, HtmlShowsEachJobWithTheIntegratedFiguresAndTheJsonFields) {
    const test::RunResult j = report({"--format", "json"});
    ASSERT_EQ(j.exit_code, 0) << j.err;
    const json rep = json::parse(j.out);
    const std::string page = m_dir.file("report.html");
    const test::RunResult h = report({"--format", "html", "--output", page});
    ASSERT_EQ(h.exit_code, 0) << h.err;
    const std::string html = test::read_text(page);
    EXPECT_NE(html.find("<section id=\"identities\"><h2>§4 Top jobs</h2>"), std::string::npos);
    EXPECT_EQ(html.find("§4 Top identities"), std::string::npos);
    const std::map<std::string, double> numbers = marked(html);
    const std::vector<Expected> want = expected();
    ASSERT_EQ(rep["jobs"]["top"].size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        const Expected& e = want[i];
        SCOPED_TRACE(e.id);
        EXPECT_NE(html.find(fmt::format("<tr><td>{}</td><td>{}</td>", e.id, e.kind)),
                  std::string::npos);
        const std::string key = fmt::format("jobs.top.{}.", i);
        for (const auto& [field, value] :
             std::vector<std::pair<std::string, double>>{{"gpus_allocated", e.gpus},
                                                         {"allocated_gpu_hours", e.allocated},
                                                         {"active_gpu_hours", e.active},
                                                         {"idle_held_gpu_hours", e.idle_held},
                                                         {"allocated_unused_gpu_hours", e.unused},
                                                         {"unmeasured_gpu_hours", 0.0},
                                                         {"cost_cents", e.cost_cents}}) {
            ASSERT_TRUE(numbers.contains(key + field)) << field;
            EXPECT_NEAR(numbers.at(key + field), value, 1e-9) << field;
        }
    }
    EXPECT_NE(html.find("ml <span class=\"muted\">(namespace)</span>"), std::string::npos);
    // Every marked number is the JSON report's field of that name, exactly.
    for (const auto& [path, value] : numbers) {
        const json::json_pointer pointer(
            "/" + std::regex_replace(path, std::regex("\\."), std::string("/")));
        ASSERT_TRUE(rep.contains(pointer)) << path;
        EXPECT_EQ(rep[pointer].get<double>(), value) << path;
    }
    if (test::chromium_binary().empty()) {
        GTEST_SKIP() << "chromium is not installed: the page was not loaded in a browser";
    }
    const test::LoadedPage loaded = test::load_in_chromium(page, m_dir.file("profile"));
    ASSERT_EQ(loaded.exit_code, 0) << loaded.err;
    EXPECT_TRUE(loaded.console.empty()) << loaded.err;
    EXPECT_EQ(marked(loaded.dom), numbers);
}

} // namespace jobs_formats_test
} // namespace gua::report
