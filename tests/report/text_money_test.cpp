// SPDX-License-Identifier: Apache-2.0
// Money formatting and the §7/§8 text: grouping, symbols, and rows that add up on the page.
#include "report/render.hpp"
#include "report/text_sections.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gua::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(TextMoney, FormatsCentsWithSymbolAndThousands) {
    EXPECT_EQ(format_money(0, "USD"), "$0.00");
    EXPECT_EQ(format_money(5, "USD"), "$0.05");
    EXPECT_EQ(format_money(123456, "USD"), "$1,234.56");
    EXPECT_EQ(format_money(100000000, "USD"), "$1,000,000.00");
    EXPECT_EQ(format_money(-250, "USD"), "$-2.50");
    EXPECT_EQ(format_money(99999, "EUR"), "€999.99");
    EXPECT_EQ(format_money(1200, "GBP"), "£12.00");
    EXPECT_EQ(format_money(1200, "CHF"), "CHF 12.00");
}

TEST(TextMoney, CostSectionShowsPricesRowsAndExactRunRate) {
    ReportModel m;
    m.cost.gpus.push_back(
        GpuCostRow{0, "NVIDIA H100 80GB HBM3", 4'000'000, {40000, 20000, 0}, 1.0, ""});
    m.cost.gpus.push_back(GpuCostRow{1, "NVIDIA L4", 2'456'789, {1, 2, 3}, 1.0, ""});
    m.cost.total = m.cost.gpus[0].cost;
    m.cost.total += m.cost.gpus[1].cost;
    m.cost.identities.push_back(IdentityCostRow{"alice", 40001, 20002});
    m.cost.idle_held_rate = audit::RunRate{133};
    m.cost.truly_idle_rate = audit::RunRate{1};
    m.cost.waste_rate = audit::RunRate{134};
    m.cost.spot_discount = 0.6;
    std::string out;
    render_cost_text(out, m);
    EXPECT_THAT(out, HasSubstr("§7 Cost (USD; built-in example prices, set [pricing] in "
                               "gua.toml; spot discount 60 %)"));
    EXPECT_THAT(out, HasSubstr("$4.00"));
    EXPECT_THAT(out, HasSubstr("$2.456789"));
    EXPECT_THAT(out, HasSubstr("$400.00"));
    EXPECT_THAT(out, HasSubstr("$600.06"));
    EXPECT_THAT(out, HasSubstr("alice"));
    EXPECT_THAT(out, HasSubstr("$600.03"));
    EXPECT_THAT(out, HasSubstr("Waste run-rate: $1.34/hour → $964.80/month (× 720 h) → "
                               "$11,738.40/year (× 8760 h)"));
    EXPECT_THAT(out, HasSubstr("100.0%"));
}

TEST(TextMoney, RecommendationsSayWhenNothingFired) {
    ReportModel m;
    std::string out;
    render_recommendations_text(out, m);
    EXPECT_THAT(out, HasSubstr("(no rule fired"));
    EXPECT_THAT(out, Not(HasSubstr("Combined")));
}

} // namespace
} // namespace gua::report
