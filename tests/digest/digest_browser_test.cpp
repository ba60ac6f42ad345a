// SPDX-License-Identifier: Apache-2.0
// The digest's HTML body in headless Chromium: it loads without console errors, every number it
// marks equals the digest's JSON, and the plain-text body states the same numbers.
#include "digest/history.hpp"
#include "support/chromium.hpp"
#include "support/json_path.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <regex>

namespace gua::digest_browser_test {
namespace {

using nlohmann::json;

/// The text a figure of `path` shows in the plain-text body.
std::string as_text(const std::string& path, double v) {
    if (path.ends_with("cents")) {
        EXPECT_LT(v, 100000.0) << "no thousands separator expected here";
        return fmt::format("${:.2f}", v / 100);
    }
    if (path.ends_with("change_pct")) {
        return fmt::format("{:+.1f}%", v);
    }
    return path.ends_with(".change") ? fmt::format("{:+.2f}", v) : fmt::format("{:.2f}", v);
}

TEST(DigestBrowser, HtmlBodyLoadsAndShowsTheJsonAndTextNumbers) {
    if (test::chromium_binary().empty()) {
        GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh --test)";
    }
    test::TempDir dir;
    const std::string db = dir.file("history.db");
    digest_test::write_history(db, 1'794'182'400 * k_us_per_second); // 2026-11-09T00:00:00Z
    std::ofstream(dir.file("gua.toml")) << "[pricing]\ndefault = 2.00\n";
    const std::string out = dir.file("out");
    const test::RunResult r =
        test::run_gua({"digest", "--db", db, "--config", dir.file("gua.toml"), "--from",
                       "2026-11-16", "--to", "2026-11-23", "--output-dir", out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const std::string stem : {"user-alice", "admin-admin"}) {
        SCOPED_TRACE(stem);
        const json j = json::parse(test::read_text(out + "/" + stem + ".json"));
        const std::string text = test::read_text(out + "/" + stem + ".txt");
        const std::string html = test::read_text(out + "/" + stem + ".html");
        EXPECT_EQ(html.find("<script"), std::string::npos);
        EXPECT_EQ(html.find("http"), std::string::npos) << "nothing fetched";
        const test::LoadedPage page =
            test::load_in_chromium(out + "/" + stem + ".html", dir.file("profile-" + stem));
        ASSERT_EQ(page.exit_code, 0) << page.err;
        for (const std::string& line : page.console) {
            ADD_FAILURE() << "console: " << line;
        }
        static const std::regex k_marked(R"re(data-field="([^"]*)" data-value="([^"]*)")re");
        std::size_t marked = 0;
        for (auto it = std::sregex_iterator(page.dom.begin(), page.dom.end(), k_marked);
             it != std::sregex_iterator(); ++it, ++marked) {
            const std::string path = (*it)[1];
            const json* v = test::json_at(j, path);
            ASSERT_NE(v, nullptr) << path;
            EXPECT_EQ(std::stod((*it)[2]), v->get<double>()) << path;
            EXPECT_NE(text.find(as_text(path, v->get<double>())), std::string::npos)
                << path << " = " << as_text(path, v->get<double>()) << " not in\n"
                << text;
        }
        // Hours and cents of two states, two trends of four figures, the remedy's two.
        EXPECT_GE(marked, 4u + 8u);
        EXPECT_NE(page.dom.find("GPU digest for"), std::string::npos);
    }
}

} // namespace
} // namespace gua::digest_browser_test
