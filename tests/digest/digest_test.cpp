// SPDX-License-Identifier: Apache-2.0
// `gua digest` on a generated two-week history: every user's, team's and the admin's figures
// equal `gua report --format json`'s for the same window (and --user filter) and the history's
// own integration; the trend against the week before; the threshold; --dry-run; bad flags.
#include "digest/history.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace gua::digest_test {
namespace {

using nlohmann::json;

constexpr TimeUs k_week0 = 1'794'182'400 * k_us_per_second; // 2026-11-09T00:00:00Z, a Monday
const std::string k_w0 = "2026-11-09T00:00:00Z";
const std::string k_w1 = "2026-11-16T00:00:00Z";
const std::string k_w2 = "2026-11-23T00:00:00Z";

constexpr const char* k_config = R"([pricing]
currency = "USD"
default = 2.00

[teams]
alice = "vision"
bob = "vision"
carol = "nlp"

[digest]
min_idle_held_hours = 1.0
admin = "ops@example.org"

[digest.recipients]
alice = "alice@example.org"
vision = "vision-leads@example.org"
)";

class Digest : public ::testing::Test {
  protected:
    void SetUp() override {
        m_db = m_dir.file("history.db");
        m_config = m_dir.file("gua.toml");
        std::ofstream(m_config) << k_config;
        m_truth = write_history(m_db, k_week0);
    }

    test::RunResult gua(std::vector<std::string> args) const {
        args.insert(args.end(), {"--db", m_db, "--config", m_config});
        return test::run_gua(args);
    }

    json run_json(std::vector<std::string> args) const {
        const test::RunResult r = gua(std::move(args));
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.exit_code == 0 ? json::parse(r.out) : json::object();
    }

    json digests() const {
        return run_json({"digest", "--from", k_w1, "--to", k_w2, "--format", "json"})["digests"];
    }

    /// `gua report` of one week as JSON (extra: --user, --group-by).
    json report(const std::string& from, const std::string& to,
                std::vector<std::string> extra = {}) const {
        std::vector<std::string> args{"report",   "--from", from,    "--to", to,
                                      "--format", "json",   "--top", "1000"};
        args.insert(args.end(), extra.begin(), extra.end());
        return run_json(args);
    }

    test::TempDir m_dir;
    std::string m_db;
    std::string m_config;
    History m_truth;
};

const json* find(const json& digests, const std::string& kind, const std::string& name) {
    for (const json& d : digests) {
        if (d["kind"] == kind && d["name"] == name) {
            return &d;
        }
    }
    return nullptr;
}

const json* row(const json& rows, const std::string& name) {
    for (const json& r : rows) {
        if (r["name"] == name) {
            return &r;
        }
    }
    return nullptr;
}

/// Hours of `who` in the truth of weeks `weeks` (both: sum).
Hours hours(const History& h, int week, const std::vector<std::string>& who) {
    Hours out;
    for (const std::string& w : who) {
        const auto it = h.week[week].find(w);
        if (it != h.week[week].end()) {
            out.active += it->second.active;
            out.idle_held += it->second.idle_held;
        }
    }
    return out;
}

void expect_identity(const json& d, const json& report_now, const json& report_before,
                     const Hours& now, const Hours& before) {
    const std::string name = d["name"];
    SCOPED_TRACE(name);
    const json* r = row(report_now["identities"]["top"], name);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(d["active_gpu_hours"], (*r)["active_gpu_hours"]);
    EXPECT_EQ(d["idle_held_gpu_hours"], (*r)["idle_held_gpu_hours"]);
    EXPECT_EQ(d["gpu_hours"], (*r)["gpu_hours"]);
    EXPECT_NEAR(d["active_gpu_hours"].get<double>(), now.active, 1e-9);
    EXPECT_NEAR(d["idle_held_gpu_hours"].get<double>(), now.idle_held, 1e-9);
    const json* c = row(report_now["cost"]["identities"], name);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(d["cost"]["active_cents"], (*c)["active_cents"]);
    EXPECT_EQ(d["cost"]["idle_held_cents"], (*c)["idle_held_cents"]);
    // $2.00 per GPU-hour, rounded per card: at most a cent off per card.
    EXPECT_NEAR(d["cost"]["idle_held_cents"].get<double>(), now.idle_held * 200, 2.0);
    EXPECT_NEAR(d["cost"]["active_cents"].get<double>(), now.active * 200, 2.0);
    const json& trend = d["trend"]["gpu_hours"];
    const json* b = row(report_before["identities"]["top"], name);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(trend["previous"], (*b)["gpu_hours"]);
    const double prev = before.active + before.idle_held;
    const double cur = now.active + now.idle_held;
    EXPECT_NEAR(trend["previous"].get<double>(), prev, 1e-9);
    EXPECT_NEAR(trend["change"].get<double>(), cur - prev, 1e-9);
    EXPECT_NEAR(trend["change_pct"].get<double>(), (cur - prev) / prev * 100, 1e-9);
    EXPECT_NEAR(d["trend"]["idle_held_gpu_hours"]["previous"].get<double>(), before.idle_held,
                1e-9);
}

TEST_F(Digest, UserFiguresEqualTheReportAndTheIntegratedHistory) {
    const json all = digests();
    const json now = report(k_w1, k_w2);
    const json before = report(k_w0, k_w1);
    for (const std::string user : {"alice", "bob"}) {
        const json* d = find(all, "user", user);
        ASSERT_NE(d, nullptr) << user;
        expect_identity(*d, now, before, hours(m_truth, 1, {user}), hours(m_truth, 0, {user}));
        RecordProperty(user + "_idle_held_gpu_hours", (*d)["idle_held_gpu_hours"].dump());
        RecordProperty(user + "_previous_idle_held_gpu_hours",
                       (*d)["trend"]["idle_held_gpu_hours"]["previous"].dump());
        // The same row in the report filtered to the user.
        const json own = report(k_w1, k_w2, {"--user", user});
        EXPECT_EQ((*d)["idle_held_gpu_hours"],
                  (*row(own["identities"]["top"], user))["idle_held_gpu_hours"]);
        EXPECT_EQ((*d)["window"]["from"], k_w1);
        EXPECT_EQ((*d)["previous_window"]["from"], k_w0);
    }
    EXPECT_EQ((*find(all, "user", "alice"))["address"], "alice@example.org");
    EXPECT_EQ((*find(all, "user", "bob"))["address"], "");
    // alice was active less often than the week before: her idle-held time rose.
    EXPECT_GT((*find(all, "user", "alice"))["trend"]["idle_held_gpu_hours"]["change"].get<double>(),
              0.0);
}

TEST_F(Digest, TeamAndAdminFiguresEqualTheReport) {
    const json all = digests();
    const json teams_now = report(k_w1, k_w2, {"--group-by", "team"});
    const json teams_before = report(k_w0, k_w1, {"--group-by", "team"});
    const json* vision = find(all, "team", "vision");
    ASSERT_NE(vision, nullptr);
    expect_identity(*vision, teams_now, teams_before, hours(m_truth, 1, {"alice", "bob"}),
                    hours(m_truth, 0, {"alice", "bob"}));
    EXPECT_EQ((*vision)["address"], "vision-leads@example.org");
    ASSERT_NE(find(all, "team", "nlp"), nullptr) << "teams have no threshold";

    const json* admin = find(all, "admin", "admin");
    ASSERT_NE(admin, nullptr);
    EXPECT_EQ(all[0]["kind"], "admin");
    const json now = report(k_w1, k_w2);
    const json before = report(k_w0, k_w1);
    EXPECT_EQ((*admin)["active_gpu_hours"], now["headline"]["active_gpu_hours"]);
    EXPECT_EQ((*admin)["idle_held_gpu_hours"], now["headline"]["idle_held_gpu_hours"]);
    EXPECT_EQ((*admin)["cost"]["idle_held_cents"], now["cost"]["total"]["idle_held_cents"]);
    EXPECT_EQ((*admin)["cost"]["active_cents"], now["cost"]["total"]["active_cents"]);
    EXPECT_NEAR((*admin)["idle_held_gpu_hours"].get<double>(), m_truth.week[1].at("*").idle_held,
                1e-9);
    EXPECT_NEAR((*admin)["active_gpu_hours"].get<double>(), m_truth.week[1].at("*").active, 1e-9);
    EXPECT_NEAR((*admin)["trend"]["idle_held_gpu_hours"]["previous"].get<double>(),
                before["headline"]["idle_held_gpu_hours"].get<double>(), 1e-12);
    EXPECT_NEAR((*admin)["trend"]["gpu_hours"]["previous"].get<double>(),
                m_truth.week[0].at("*").active + m_truth.week[0].at("*").idle_held, 1e-9);
    EXPECT_TRUE((*admin)["allocated_unused_gpu_hours"].is_null()) << "no allocation recorded";
    EXPECT_EQ((*admin)["address"], "ops@example.org");
    // §8's first remedy, and the longest idle-held stretches inside the window.
    ASSERT_FALSE(now["recommendations"]["items"].empty());
    EXPECT_EQ((*admin)["recommendation"]["id"], now["recommendations"]["items"][0]["id"]);
    ASSERT_FALSE((*admin)["worst_sessions"].empty());
    double last = 1e9;
    for (const json& s : (*admin)["worst_sessions"]) {
        EXPECT_GE(s["from"].get<std::string>(), k_w1);
        EXPECT_LE(s["to"].get<std::string>(), k_w2);
        EXPECT_LE(s["idle_held_gpu_hours"].get<double>(), last);
        last = s["idle_held_gpu_hours"].get<double>();
        EXPECT_GT(last, 0.0);
    }
}

TEST_F(Digest, UserUnderTheThresholdGetsNone) {
    const json all = digests();
    // carol held a card idle for three 10-minute ticks: 0.5 GPU-hours < 1.0.
    EXPECT_NEAR(m_truth.week[1].at("carol").idle_held, 0.5, 1e-12);
    EXPECT_EQ(find(all, "user", "carol"), nullptr);
    const json only_users = run_json(
        {"digest", "--from", k_w1, "--to", k_w2, "--format", "json", "--for", "user"})["digests"];
    EXPECT_EQ(only_users.size(), 2u);
    for (const json& d : only_users) {
        EXPECT_EQ(d["kind"], "user");
    }
}

TEST_F(Digest, OutputDirWritesOneFileSetPerRecipientAndDryRunNothing) {
    const std::string dir = m_dir.file("out");
    const test::RunResult dry =
        gua({"digest", "--from", k_w1, "--to", k_w2, "--output-dir", dir, "--dry-run"});
    ASSERT_EQ(dry.exit_code, 0) << dry.err;
    EXPECT_FALSE(std::filesystem::exists(dir));
    EXPECT_NE(dry.out.find("would write user alice → alice@example.org"), std::string::npos)
        << dry.out;
    EXPECT_NE(dry.out.find("5 digests; nothing written (--dry-run)"), std::string::npos) << dry.out;

    const test::RunResult wrote =
        gua({"digest", "--from", k_w1, "--to", k_w2, "--output-dir", dir});
    ASSERT_EQ(wrote.exit_code, 0) << wrote.err;
    for (const std::string stem :
         {"admin-admin", "team-vision", "team-nlp", "user-alice", "user-bob"}) {
        for (const char* ext : {".txt", ".html", ".json"}) {
            EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/" + stem + ext)) << stem << ext;
        }
    }
    EXPECT_FALSE(std::filesystem::exists(dir + "/user-carol.txt"));
    const json alice = json::parse(test::read_text(dir + "/user-alice.json"));
    EXPECT_EQ(alice, *find(digests(), "user", "alice"));
}

TEST_F(Digest, BadFlagsAreOneLineAndExitTwo) {
    const std::vector<std::vector<std::string>> cases{
        {"digest", "--for", "nobody"},
        {"digest", "--format", "csv"},
        {"digest", "--since", "soon"},
        {"digest", "--from", k_w1, "--since", "7d"},
        {"digest", "--to", "yesterday-ish"},
        {"digest", "--format", "html"},
        {"digest", "--bogus"},
    };
    for (const std::vector<std::string>& c : cases) {
        const test::RunResult r = gua(c);
        SCOPED_TRACE(c[1] + " " + (c.size() > 2 ? c[2] : ""));
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_EQ(r.out, "");
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
    std::ofstream(m_config, std::ios::app) << "[digest.extra]\n";
    const test::RunResult r = gua({"digest", "--dry-run"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("digest.extra: unknown key"), std::string::npos) << r.err;
}

} // namespace
} // namespace gua::digest_test
