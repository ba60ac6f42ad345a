// SPDX-License-Identifier: Apache-2.0
// The HTML renderer without a browser: escaping, `code` in prose, an empty report, and --output
// (a file replaced whole, a clear one-line error when it cannot be written).
#include "report/html_sections.hpp"
#include "report/render.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace gua::report {
namespace {

TEST(HtmlRender, EscapesMarkupAndQuotes) {
    EXPECT_EQ(html::esc("<a href='x'>\"&amp;\"</a>"),
              "&lt;a href=&#39;x&#39;&gt;&quot;&amp;amp;&quot;&lt;/a&gt;");
    EXPECT_EQ(html::esc("plain ünïcode"), "plain ünïcode");
    EXPECT_EQ(html::prose("run `nvidia-smi -q` <now>"),
              "run <code>nvidia-smi -q</code> &lt;now&gt;");
    // An unpaired backtick stays as it is.
    EXPECT_EQ(html::prose("a `b` c ` d"), "a <code>b</code> c ` d");
    EXPECT_EQ(html::field("gpus.0.states.active", 0.25),
              " data-field=\"gpus.0.states.active\" data-value=\"0.25\"");
}

TEST(HtmlRender, AnEmptyReportSaysSoInEverySection) {
    ReportModel m;
    m.window_label = "7d";
    const std::string page = render_html(m);
    EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_EQ(page.substr(page.size() - 8), "</html>\n");
    EXPECT_NE(page.find("<title>gua report — (no data recorded) — 7d</title>"), std::string::npos);
    EXPECT_NE(page.find("No samples in the window."), std::string::npos);
    EXPECT_NE(page.find("No GPU cards in the window."), std::string::npos);
    EXPECT_NE(page.find("@media print"), std::string::npos);
    EXPECT_NE(page.find("prefers-color-scheme:dark"), std::string::npos);
}

TEST(HtmlOutput, WritesTheFileAndFailsWithOneLine) {
    const test::TempDir dir;
    const std::string db = dir.file("demo.db");
    ASSERT_EQ(test::run_gua({"demo", "--db", db, "--quiet", "--format", "json"}).exit_code, 0);
    const std::string page = dir.file("r.html");
    const test::RunResult ok = test::run_gua(
        {"report", "--db", db, "--since", "30d", "--format", "html", "--output", page});
    ASSERT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_EQ(ok.out, "");
    EXPECT_NE(test::read_text(page).find("</html>"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(page + ".gua-new"));

    const std::string bad = dir.file("missing/r.html");
    const test::RunResult fail = test::run_gua(
        {"report", "--db", db, "--since", "30d", "--format", "html", "--output", bad});
    EXPECT_NE(fail.exit_code, 0);
    EXPECT_EQ(fail.err, "gua: --output " + bad + ": cannot write: No such file or directory\n");
    EXPECT_EQ(fail.out, "");
}

} // namespace
} // namespace gua::report
