// SPDX-License-Identifier: Apache-2.0
// docs/report-json.md documents every field of the `cost`, `recommendations`, `provenance`,
// `policy_verdict`, `waste`, `coverage` and `health` objects.
#include "report/render.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace gua::report {
namespace {

/// Leaf paths such as "cost.gpus[].active_cents".
void leaves(const nlohmann::json& j, const std::string& path, std::vector<std::string>& out) {
    if (j.is_object() && !j.empty()) {
        for (const auto& [key, value] : j.items()) {
            leaves(value, path + "." + key, out);
        }
    } else if (j.is_array() && !j.empty() && (j[0].is_object() || j[0].is_array())) {
        leaves(j[0], path + "[]", out);
    } else {
        out.push_back(path.substr(1));
    }
}

bool mentions(const std::string& text, const std::string& word) {
    std::size_t at = 0;
    while ((at = text.find(word, at)) != std::string::npos) {
        const auto ident = [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        };
        const bool left = at == 0 || !ident(text[at - 1]);
        const bool right = at + word.size() >= text.size() || !ident(text[at + word.size()]);
        if (left && right) {
            return true;
        }
        at += word.size();
    }
    return false;
}

/// True when a table row whose first cell names an ancestor of `path` mentions the rest of it.
bool documented(const std::vector<std::string>& rows, const std::string& path) {
    std::vector<std::string> segments;
    std::stringstream in(path);
    for (std::string s; std::getline(in, s, '.');) {
        segments.push_back(s);
    }
    for (const std::string& row : rows) {
        const std::string first = row.substr(0, row.find('|', 1));
        std::string ancestor;
        for (std::size_t k = 0; k < segments.size(); ++k) {
            ancestor += (k == 0 ? "" : ".") + segments[k];
            if (first.find("`" + ancestor) == std::string::npos) {
                continue;
            }
            bool rest = true;
            for (std::size_t r = k + 1; r < segments.size(); ++r) {
                std::string seg = segments[r];
                if (seg.ends_with("[]")) {
                    seg.resize(seg.size() - 2);
                }
                rest = rest && mentions(row, seg);
            }
            if (rest) {
                return true;
            }
        }
    }
    return false;
}

ReportModel full_model() {
    ReportModel m;
    m.cost.gpus.push_back(GpuCostRow{0,
                                     "NVIDIA H100 80GB HBM3 MIG 3g.40gb",
                                     1'714'286,
                                     {100, 50, 25},
                                     3.0 / 7.0,
                                     "3/7 of the parent's price"});
    m.cost.identities.push_back(IdentityCostRow{"alice", 100, 50});
    audit::Recommendation r;
    r.id = "idle-culling";
    r.evidence = {"x"};
    r.gpus = {0};
    r.identities = {"alice"};
    r.hours = {"Sat 03:00"};
    r.pools = {audit::Pool::held_office};
    m.advice.recommendations.push_back(r);
    m.advice.combination = audit::combine({{"idle-held", 0.4, 0.1}}, 1000);
    HealthSection h;
    h.gpus.push_back(
        GpuHealthRow{0, "GPU-0a7c3e1f", "NVIDIA H100", EnergyFigures{}, ThrottleFigures{},
                     MemoryFigures{1, 0.5, 0.5, 1, 2.0, 1'000'000, 2'000'000},
                     LightFigures{"gpm", 1, 0.5, 0.5, 100},
                     GpmFigures{1, {1, 1, 1, 1, 1, 1, 1}, {0.9, 0.4, 0.02, 0.7, 0.0, 0.5, 0.1}},
                     audit::FabricTotals{}});
    h.findings.push_back(HealthFinding{"thermal-throttling", 0, 0.2, "x"});
    h.identities.push_back(IdentityEnergyRow{"alice", 1.5, 2.0, 2.0,
                                             LightFigures{"power", 1, 0.5, 0.5, std::nullopt}});
    HealthRemedy remedy;
    remedy.id = "tensor-idle";
    remedy.evidence = {"x"};
    remedy.gpus = {0};
    remedy.addressed_gpu_hours = 1;
    remedy.addressed_cents = 200;
    remedy.at_most_gpu_hours = 0.5;
    remedy.at_most_cents = 100;
    h.remedies.push_back(remedy);
    m.health = h;
    return m;
}

TEST(JsonDoc, EveryCostRecommendationsProvenanceVerdictAndHealthFieldIsDocumented) {
    std::ifstream doc(std::string(GUA_SOURCE_DIR) + "/docs/report-json.md");
    ASSERT_TRUE(doc);
    std::vector<std::string> rows;
    for (std::string line; std::getline(doc, line);) {
        if (line.starts_with("| `")) {
            rows.push_back(line);
        }
    }
    const nlohmann::json j = nlohmann::json::parse(render_json(full_model()));
    std::vector<std::string> paths;
    leaves(j["cost"], ".cost", paths);
    leaves(j["recommendations"], ".recommendations", paths);
    for (const char* object : {"provenance", "policy_verdict", "waste", "coverage", "health"}) {
        leaves(j[object], std::string(".") + object, paths);
    }
    ASSERT_GT(paths.size(), 50u);
    for (const std::string& p : paths) {
        EXPECT_TRUE(documented(rows, p)) << p << " is not in docs/report-json.md";
    }
}

TEST(JsonDoc, EveryAllocationFieldIsDocumented) {
    std::ifstream doc(std::string(GUA_SOURCE_DIR) + "/docs/report-json.md");
    ASSERT_TRUE(doc);
    std::vector<std::string> rows;
    for (std::string line; std::getline(doc, line);) {
        if (line.starts_with("| `")) {
            rows.push_back(line);
        }
    }
    ReportModel m = full_model();
    AllocationSection a;
    a.allocated_unused_hours = 1;
    a.unknown_hours = 0.5;
    a.owners.push_back(AllocationOwnerRow{"carol", "user", 1, 2.0, 1.0, 200});
    a.unallocated_use.push_back(UnallocatedUseRow{"bob", 0.3, 0.1});
    m.allocation = a;
    m.gpus.push_back(GpuRow{});
    m.advice.pool_gpu_hours[static_cast<std::size_t>(audit::Pool::allocated_unused)] = 1;
    const nlohmann::json j = nlohmann::json::parse(render_json(m));
    std::vector<std::string> paths;
    for (const char* object :
         {"headline", "allocations", "cost", "recommendations", "policy_verdict", "waste"}) {
        leaves(j[object], std::string(".") + object, paths);
    }
    // gpus[].states is documented as `headline`; its allocation keys in the gpus[] row too.
    ASSERT_TRUE(j["gpus"][0]["states"].contains("allocated_unused"));
    paths.push_back("gpus[].states.allocated_unused");
    paths.push_back("gpus[].states.allocated_unused_gpu_hours");
    for (const char* key :
         {"allocations.matrix.unknown.use_gpu_hours",
          "cost.allocation_owners[].allocated_unused_cents", "headline.allocated_unused_gpu_hours",
          "recommendations.baseline.pools.allocated_unused.gpu_hours",
          "policy_verdict.blocked_share_high"}) {
        EXPECT_NE(std::find(paths.begin(), paths.end(), key), paths.end()) << key;
    }
    for (const std::string& p : paths) {
        EXPECT_TRUE(documented(rows, p)) << p << " is not in docs/report-json.md";
    }
}

} // namespace
} // namespace gua::report
