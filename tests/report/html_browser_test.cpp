// SPDX-License-Identifier: Apache-2.0
// The HTML report in a real browser: headless Chromium loads `gua report --format html`; every
// number marked in its DOM equals the JSON report's for the same window, the console stays empty,
// and names recorded from other users' processes show as text, never as markup.
#include "store/database.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"
#include "support/chromium.hpp"
#include "support/json_path.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>
#include <set>

namespace gua::report {
namespace {

using nlohmann::json;

/// A number the page marks: its JSON field and the exact value it shows.
struct Marked {
    std::string path;
    std::string value;
};

std::vector<Marked> marked_numbers(const std::string& dom) {
    static const std::regex k_marked(R"re(data-field="([^"]*)" data-value="([^"]*)")re");
    std::vector<Marked> out;
    for (auto it = std::sregex_iterator(dom.begin(), dom.end(), k_marked);
         it != std::sregex_iterator(); ++it) {
        out.push_back(Marked{(*it)[1], (*it)[2]});
    }
    return out;
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at_ = text.find(what); at_ != std::string::npos;
         at_ = text.find(what, at_ + what.size())) {
        ++n;
    }
    return n;
}

class HtmlBrowser : public ::testing::Test {
  protected:
    void SetUp() override {
        if (test::chromium_binary().empty()) {
            GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh --test)";
        }
    }

    /// `gua report` of [from, to) from `db` as JSON, and as HTML loaded in Chromium.
    std::pair<json, test::LoadedPage> both(const std::string& db, const std::string& from,
                                           const std::string& to) {
        const std::vector<std::string> window{"report", "--db", db, "--from", from, "--to", to};
        std::vector<std::string> args = window;
        args.insert(args.end(), {"--format", "json"});
        const test::RunResult j = test::run_gua(args);
        EXPECT_EQ(j.exit_code, 0) << j.err;
        args = window;
        const std::string page = m_dir.file("report.html");
        args.insert(args.end(), {"--format", "html", "--output", page});
        const test::RunResult h = test::run_gua(args);
        EXPECT_EQ(h.exit_code, 0) << h.err;
        EXPECT_EQ(h.out, "") << "--output writes the file, not stdout";
        m_html = test::read_text(page);
        return {j.exit_code == 0 ? json::parse(j.out) : json::object(),
                test::load_in_chromium(page, m_dir.file("profile"))};
    }

    test::TempDir m_dir;
    std::string m_html;
};

/// Checks the page of a demo workload against its JSON report.
void expect_same_numbers(const json& j, const test::LoadedPage& page, const std::string& html) {
    ASSERT_EQ(page.exit_code, 0) << page.err;
    for (const std::string& line : page.console) {
        ADD_FAILURE() << "console: " << line;
    }
    EXPECT_NE(page.dom.find("</html>"), std::string::npos);
    // Self-contained: no script, no external resource of any kind.
    EXPECT_EQ(count(html, "<script"), 0u);
    EXPECT_EQ(count(html, "http://") + count(html, "https://") + count(html, " src="), 0u);
    EXPECT_EQ(count(html, "url("), 0u);

    const std::vector<Marked> numbers = marked_numbers(page.dom);
    std::set<std::string> seen;
    for (const Marked& n : numbers) {
        const json* v = test::json_at(j, n.path);
        ASSERT_NE(v, nullptr) << n.path << " is not a field of the JSON report";
        ASSERT_TRUE(v->is_number()) << n.path << " = " << v->dump();
        EXPECT_EQ(std::stod(n.value), v->get<double>()) << n.path;
        seen.insert(n.path);
    }
    std::vector<std::string> required{"samples",
                                      "headline.active",
                                      "headline.idle_held",
                                      "headline.truly_idle",
                                      "headline.idle_held_gpu_hours",
                                      "waste.idle_held_gpu_hours",
                                      "waste.idle_held_equiv_gpus",
                                      "efficiency.idle",
                                      "efficiency.measured_gpu_hours",
                                      "cost.total.total_cents",
                                      "cost.total.idle_held_cents",
                                      "cost.waste_run_rate.monthly_cents",
                                      "policy_verdict.idle_held_share",
                                      "coverage.recorded_share"};
    for (std::size_t i = 0; i < j["gpus"].size(); ++i) {
        for (const char* s : {"active", "idle_held", "truly_idle", "unmeasured"}) {
            required.push_back(fmt::format("gpus.{}.states.{}", i, s));
        }
        required.push_back(fmt::format("cost.gpus.{}.total_cents", i));
    }
    for (std::size_t i = 0; i < j["identities"]["top"].size(); ++i) {
        required.push_back(fmt::format("identities.top.{}.gpu_hours", i));
        required.push_back(fmt::format("identities.top.{}.idle_held_gpu_hours", i));
    }
    for (std::size_t i = 0; i < j["heatmap"]["cells"].size(); ++i) {
        required.push_back(fmt::format("heatmap.cells.{}.active", i));
    }
    for (std::size_t i = 0; i < j["recommendations"]["items"].size(); ++i) {
        required.push_back(fmt::format("recommendations.items.{}.addressed_cents", i));
    }
    for (std::size_t i = 0; i < j["recommendations"]["health"].size(); ++i) {
        if (!j["recommendations"]["health"][i]["addressed_gpu_hours"].is_null()) {
            required.push_back(fmt::format("recommendations.health.{}.addressed_gpu_hours", i));
        }
    }
    for (const std::string& r : required) {
        EXPECT_TRUE(seen.contains(r)) << r << " is not shown";
    }
    // Heatmap cells sit at their weekday and hour.
    static const std::regex k_cell(
        R"re(data-field="heatmap\.cells\.(\d+)\.active" data-value="[^"]*" data-weekday="(\d)" data-hour="(\d+)")re");
    std::size_t cells = 0;
    for (auto it = std::sregex_iterator(page.dom.begin(), page.dom.end(), k_cell);
         it != std::sregex_iterator(); ++it, ++cells) {
        const json& c = j["heatmap"]["cells"][std::stoul((*it)[1])];
        EXPECT_EQ(c["weekday"].get<int>(), std::stoi((*it)[2]));
        EXPECT_EQ(c["hour"].get<int>(), std::stoi((*it)[3]));
    }
    EXPECT_EQ(cells, j["heatmap"]["cells"].size());
    // One timeline per card.
    EXPECT_EQ(count(page.dom, "<div class=\"tl\">"), j["gpus"].size());
}

TEST_F(HtmlBrowser, NumbersInTheDomEqualTheJsonReport) {
    struct Case {
        std::string workload;
        std::string start;
        std::string ticks;
        std::string to;
    };
    // Two days of the office-hours box (heatmap, timelines, recommendations) and the health
    // workload (§9 figures and the health remedies of §8).
    for (const Case& c : {Case{"offhours", "2026-01-05T00:00:00Z", "288", "2026-01-07T00:00:00Z"},
                          Case{"health", "2026-01-05T10:00:00Z", "60", "2026-01-05T11:00:00Z"}}) {
        SCOPED_TRACE(c.workload);
        const std::string db = m_dir.file(c.workload + ".db");
        const test::RunResult demo =
            test::run_gua({"demo", "--workload", c.workload, "--start", c.start, "--ticks", c.ticks,
                           "--db", db, "--quiet", "--format", "json"});
        ASSERT_EQ(demo.exit_code, 0) << demo.err;
        const auto [j, page] = both(db, c.start, c.to);
        expect_same_numbers(j, page, m_html);
        if (c.workload == "health") {
            EXPECT_FALSE(j["recommendations"]["health"].empty());
        } else {
            EXPECT_FALSE(j["recommendations"]["items"].empty());
            EXPECT_GT(j["heatmap"]["cells"].size(), 24u);
        }
    }
}

TEST_F(HtmlBrowser, HostileNamesShowAsText) {
    // A host, a card model, a user and a command that try to inject markup and script.
    const std::string evil = "<script>console.error(\"INJECTED-1\")</script><img src=x "
                             "onerror=\"console.error('INJECTED-2')\">'\"&amp;";
    const std::string db = m_dir.file("evil.db");
    constexpr TimeUs k_start = 1'767'607'200 * k_us_per_second; // 2026-01-05T10:00:00Z
    constexpr DurationUs k_tick = 30 * k_us_per_second;
    {
        store::Database d(db, store::OpenMode::create);
        store::migrate(d);
        store::Writer w(d, store::RunInfo{evil, "560.35.05", "nvml", k_tick, 10.0, k_start});
        for (std::uint64_t i = 0; i < 20; ++i) {
            telemetry::Tick t;
            t.seq = i;
            t.t0 = k_start + static_cast<TimeUs>(i) * k_tick;
            t.duration_us = k_tick;
            telemetry::CardTickRecord c;
            c.device.uuid = "GPU-0a7c3e1f-aaaa-bbbb-cccc-0123456789ab";
            c.device.name = evil;
            c.device.memory_total_mib = 81920;
            c.util_source = telemetry::UtilSource::samples;
            c.util_pct = 0;
            c.active_us = 0;
            c.bucket_us[0] = k_tick;
            c.util_samples = 1;
            telemetry::ProcessTick p;
            p.pid = 4242;
            p.start_ticks = 1;
            p.identity.user = evil;
            p.identity.command = evil;
            p.mem_used_mib = 8192;
            p.sm_util_pct = 0;
            c.processes.push_back(p);
            t.cards.push_back(c);
            w.write(t);
        }
        w.finish(k_start + 20 * k_tick);
    }
    const auto [j, page] = both(db, "2026-01-05T10:00:00Z", "2026-01-05T11:00:00Z");
    ASSERT_EQ(page.exit_code, 0) << page.err;
    ASSERT_EQ(j["identities"]["top"][0]["name"], evil);
    for (const std::string& line : page.console) {
        ADD_FAILURE() << "console: " << line;
    }
    EXPECT_EQ(page.err.find("INJECTED"), std::string::npos);
    EXPECT_EQ(count(page.dom, "<script"), 0u);
    EXPECT_EQ(count(page.dom, "<img"), 0u);
    // No element got an event handler attribute (serialized attributes are always quoted).
    static const std::regex k_handler(R"re(<[a-z]+(\s+[a-z:-]+(="[^"]*")?)*\s+on[a-z]+=)re");
    EXPECT_FALSE(std::regex_search(page.dom, k_handler));
    // The name is there as text: the serialized DOM escapes it back.
    const std::string as_text = "&lt;script&gt;console.error(\"INJECTED-1\")&lt;/script&gt;&lt;img";
    EXPECT_GE(count(page.dom, as_text), 3u) << "host, model and identity rows";
    EXPECT_EQ(count(m_html, "<script"), 0u);
}

} // namespace
} // namespace gua::report
