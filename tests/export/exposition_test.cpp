// SPDX-License-Identifier: Apache-2.0
// The hand-written text format: escaping, HELP/TYPE placement, unique series, values.
#include "export/exposition.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace gua::exporter {
namespace {

TEST(Exposition, EscapesLabelValues) {
    EXPECT_EQ(escape_label_value(R"(a\b"c)"
                                 "\n"
                                 "d"),
              R"(a\\b\"c\nd)");
    EXPECT_EQ(escape_label_value("plain"), "plain");
}

TEST(Exposition, FormatsValues) {
    EXPECT_EQ(format_value(0), "0");
    EXPECT_EQ(format_value(1.5), "1.5");
    EXPECT_EQ(format_value(30), "30");
    EXPECT_EQ(format_value(std::numeric_limits<double>::quiet_NaN()), "NaN");
    EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
    EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
    EXPECT_EQ(std::stod(format_value(0.1 + 0.2)), 0.1 + 0.2) << "round-trips exactly";
}

TEST(Exposition, HelpAndTypeBeforeContiguousSamples) {
    Exposition e;
    e.family("gua_b_total", MetricType::counter, "B things.\nSecond line \\ slash");
    e.family("gua_a_bytes", MetricType::gauge, "A bytes.");
    e.add("gua_a_bytes", {{"gpu", "1"}}, 2);
    e.add("gua_b_total", {{"user", "x\"y"}}, 3);
    e.add("gua_a_bytes", {{"gpu", "0"}}, 1);
    EXPECT_EQ(e.render(), "# HELP gua_b_total B things.\\nSecond line \\\\ slash\n"
                          "# TYPE gua_b_total counter\n"
                          "gua_b_total{user=\"x\\\"y\"} 3\n"
                          "# HELP gua_a_bytes A bytes.\n"
                          "# TYPE gua_a_bytes gauge\n"
                          "gua_a_bytes{gpu=\"0\"} 1\n"
                          "gua_a_bytes{gpu=\"1\"} 2\n");
}

TEST(Exposition, SameLabelSetIsSummedNotRepeated) {
    Exposition e;
    e.family("gua_x_total", MetricType::counter, "X.");
    e.add("gua_x_total", {{"user", "other"}}, 1.5);
    e.add("gua_x_total", {{"user", "other"}}, 2);
    e.add("gua_x_total", {}, 7);
    EXPECT_EQ(e.render(), "# HELP gua_x_total X.\n# TYPE gua_x_total counter\n"
                          "gua_x_total 7\ngua_x_total{user=\"other\"} 3.5\n");
}

TEST(Exposition, FamiliesWithoutSamplesAreLeftOutAndTheTextEndsInNewline) {
    Exposition e;
    e.family("gua_empty", MetricType::gauge, "Nothing.");
    EXPECT_EQ(e.render(), "");
    e.family("gua_one", MetricType::gauge, "One.");
    e.add("gua_one", {}, 1);
    const std::string text = e.render();
    EXPECT_EQ(text.find("gua_empty"), std::string::npos);
    EXPECT_EQ(text.back(), '\n');
}

TEST(Exposition, UndeclaredFamilyIsAnError) {
    Exposition e;
    EXPECT_THROW(e.add("gua_nope", {}, 1), std::exception);
}

} // namespace
} // namespace gua::exporter
