// SPDX-License-Identifier: Apache-2.0
// The CSV tables: RFC 4180 framing (header, CRLF, quoting) and every number equal to the model's
// or, end to end, to the JSON report's.
#include "report/render.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace gua::report {
namespace {

/// A minimal RFC 4180 reader: records of fields, CRLF ends, "" inside quotes.
std::vector<std::vector<std::string>> parse(const std::string& text) {
    std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
    bool quoted = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                rows.back().back() += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                rows.back().back() += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            rows.back().emplace_back();
        } else if (c == '\r') {
            EXPECT_EQ(text.at(i + 1), '\n') << "CR without LF at " << i;
            ++i;
            rows.emplace_back(1);
        } else {
            EXPECT_NE(c, '\n') << "bare LF at " << i;
            rows.back().back() += c;
        }
    }
    EXPECT_EQ(rows.back(), std::vector<std::string>(1)) << "no CRLF after the last record";
    rows.pop_back();
    return rows;
}

ReportModel model() {
    ReportModel m;
    m.time_zone = "Europe/Berlin";
    GpuRow g;
    g.index = 3;
    g.uuid = "GPU-12345678-0000";
    g.model = "NVIDIA H100 80GB HBM3";
    g.shares = StateShares{0.5, 0.25, 0.125, 0.125, 4, 2, 1, 1};
    g.samples = 960;
    m.gpus.push_back(g);
    m.identities.push_back(IdentityRow{"team \"ml\", nlp", 6, 4, 2, 1.0 / 3, 40.5, 900});
    m.heatmap[2][14] = HeatCell{true, 0.75, 0.25, 0, 2.5};
    m.cost.currency = "EUR";
    m.cost.gpus.push_back(GpuCostRow{3, g.model, 2'500'000, audit::StateCost{1000, 505, 7}, 1, ""});
    m.cost.total = audit::StateCost{1000, 505, 7};
    m.cost.identities.push_back(IdentityCostRow{"team \"ml\", nlp", 1000, 505});
    return m;
}

TEST(Csv, GpusAndIdentitiesRoundTrip) {
    const auto gpus = parse(render_csv(model(), CsvTable::gpus));
    ASSERT_EQ(gpus.size(), 2u);
    EXPECT_EQ(gpus[0][0], "host");
    EXPECT_EQ(gpus[0].size(), gpus[1].size());
    EXPECT_EQ(gpus[1][1], "3");
    EXPECT_EQ(gpus[1][3], "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(std::stod(gpus[1][4]), 4);    // active hours
    EXPECT_EQ(std::stod(gpus[1][9]), 0.25); // idle-held share
    EXPECT_EQ(gpus[1][12], "960");

    const std::string text = render_csv(model(), CsvTable::identities);
    EXPECT_NE(text.find("\"team \"\"ml\"\", nlp\""), std::string::npos) << text;
    const auto ids = parse(text);
    ASSERT_EQ(ids.size(), 2u);
    EXPECT_EQ(ids[1][0], "team \"ml\", nlp");
    EXPECT_EQ(std::stod(ids[1][4]), 1.0 / 3);
    EXPECT_EQ(std::stod(ids[1][5]), 40.5);
}

TEST(Csv, HeatmapHasEveryCellAndCostIsExactFromCents) {
    const auto heat = parse(render_csv(model(), CsvTable::heatmap));
    ASSERT_EQ(heat.size(), 1u + 7 * 24);
    const auto& tue14 = heat[1 + 2 * 24 + 14];
    EXPECT_EQ(tue14[0], "Tue");
    EXPECT_EQ(tue14[1], "14");
    EXPECT_EQ(tue14[2], "Europe/Berlin");
    EXPECT_EQ(std::stod(tue14[3]), 2.5);
    EXPECT_EQ(std::stod(tue14[4]), 0.75);
    EXPECT_EQ(heat[1][4], ""); // no data: no share, never 0

    const auto cost = parse(render_csv(model(), CsvTable::cost));
    ASSERT_EQ(cost.size(), 4u);
    EXPECT_EQ(cost[1], (std::vector<std::string>{"gpu", "3", "NVIDIA H100 80GB HBM3", "EUR", "2.5",
                                                 "10.00", "5.05", "0.07", "15.12"}));
    EXPECT_EQ(cost[2][0], "total");
    EXPECT_EQ(cost[2][8], "15.12");
    EXPECT_EQ(cost[3][2], "team \"ml\", nlp");
    EXPECT_EQ(cost[3][8], "15.05");
}

TEST(Csv, EndToEndEqualsTheJsonReport) {
    const test::TempDir temp;
    const std::string db = temp.file("demo.db");
    ASSERT_EQ(test::run_gua({"demo", "--db", db, "--quiet"}).exit_code, 0);
    const test::RunResult json_run =
        test::run_gua({"report", "--db", db, "--since", "30d", "--format", "json"});
    ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
    const nlohmann::json j = nlohmann::json::parse(json_run.out);
    const test::RunResult csv_run = test::run_gua(
        {"report", "--db", db, "--since", "30d", "--format", "csv", "--table", "gpus"});
    ASSERT_EQ(csv_run.exit_code, 0) << csv_run.err;
    const auto rows = parse(csv_run.out);
    ASSERT_EQ(rows.size(), j["gpus"].size() + 1);
    for (std::size_t i = 0; i < j["gpus"].size(); ++i) {
        EXPECT_EQ(rows[i + 1][2], j["gpus"][i]["uuid"]);
        EXPECT_NEAR(std::stod(rows[i + 1][5]),
                    j["gpus"][i]["states"]["idle_held_gpu_hours"].get<double>(), 1e-12);
    }
    const test::RunResult missing =
        test::run_gua({"report", "--db", db, "--since", "30d", "--format", "csv"});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_EQ(missing.err, "gua: --format csv needs --table gpus, identities, heatmap or cost\n");
}

} // namespace
} // namespace gua::report
