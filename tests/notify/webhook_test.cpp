// SPDX-License-Identifier: Apache-2.0
// `gua digest` through webhooks to a real HTTP receiver on loopback: the Slack, Teams (Adaptive
// Card) and generic JSON payloads carry their documented fields and the digest's figures (the
// generated history's own integration); --dry-run sends nothing; a failing server is retried with
// doubling backoff, a down one ends in one line and exit 1; no webhook URL path is ever printed.
#include "digest/history.hpp"
#include "notify/servers.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gua::notify_test {
namespace webhook_test { // named after the file: unique in a unity batch

using nlohmann::json;

constexpr TimeUs k_week0 = 1'794'182'400 * k_us_per_second; // 2026-11-09T00:00:00Z
const std::string k_w1 = "2026-11-16T00:00:00Z";
const std::string k_w2 = "2026-11-23T00:00:00Z";
// The paths of the webhook URLs: their secret part, which gua must never print.
const std::string k_slack_path = "/services/T0001/B0002/s3cretSlackToken";
const std::string k_teams_path = "/workflows/abc/triggers/manual/paths/invoke?sig=s3cretTeamsSig";
const std::string k_json_path = "/hooks/s3cretJsonToken";

class DeliveryWebhook : public ::testing::Test {
  protected:
    void SetUp() override {
        m_db = m_dir.file("history.db");
        m_truth = digest_test::write_history(m_db, k_week0);
    }

    /// gua.toml with the three webhooks on `port` (Slack and JSON URLs from files).
    void configure(int port, const std::string& delivery) {
        const std::string base = "http://127.0.0.1:" + std::to_string(port);
        write_file(m_dir.file("slack-url"), base + k_slack_path + "\n");
        write_file(m_dir.file("json-url"), base + k_json_path + "\n");
        write_file(m_dir.file("gua.toml"),
                   "[digest]\nadmin = \"ops@example.org\"\n\n"
                   "[webhook.chat]\nkind = \"slack\"\nurl_file = \"" +
                       m_dir.file("slack-url") +
                       "\"\n\n[webhook.team]\nkind = \"teams\"\nurl = \"" + base + k_teams_path +
                       "\"\nfor = \"both\"\n\n[webhook.hook]\nkind = \"json\"\nurl_file = \"" +
                       m_dir.file("json-url") + "\"\nfor = \"digest\"\ntimeout = \"5s\"\n\n" +
                       delivery);
    }

    test::RunResult digest(std::vector<std::string> extra = {}) const {
        std::vector<std::string> args{"digest", "--db", m_db,   "--config", m_dir.file("gua.toml"),
                                      "--from", k_w1,   "--to", k_w2,       "--for",
                                      "admin"};
        args.insert(args.end(), extra.begin(), extra.end());
        return test::run_gua(args);
    }

    static void expect_no_secret(const std::string& text) {
        for (const char* secret : {"s3cretSlackToken", "s3cretTeamsSig", "s3cretJsonToken"}) {
            EXPECT_EQ(text.find(secret), std::string::npos) << text;
        }
    }

    test::TempDir m_dir;
    std::string m_db;
    digest_test::History m_truth;
};

/// The admin digest's subject, from `gua digest --format json` (no transport configured).
std::string admin_subject(const std::string& db) {
    test::TempDir plain;
    write_file(plain.file("gua.toml"), "[digest]\nadmin = \"ops@example.org\"\n");
    const test::RunResult r =
        test::run_gua({"digest", "--db", db, "--config", plain.file("gua.toml"), "--from", k_w1,
                       "--to", k_w2, "--for", "admin", "--format", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out)["digests"][0]["subject"];
}

void expect_slack(const json& p, const std::string& subject) {
    // Slack's incoming webhook: "text" (the notification's fallback) and optional "blocks": a
    // header block's plain_text holds at most 150 characters, a section's text 3000.
    ASSERT_TRUE(p["text"].is_string());
    EXPECT_NE(p["text"].get<std::string>().find(subject), std::string::npos);
    ASSERT_EQ(p["blocks"].size(), 2u);
    EXPECT_EQ(p["blocks"][0]["type"], "header");
    EXPECT_EQ(p["blocks"][0]["text"]["type"], "plain_text");
    EXPECT_EQ(p["blocks"][0]["text"]["text"], subject);
    EXPECT_LE(p["blocks"][0]["text"]["text"].get<std::string>().size(), 150u);
    EXPECT_EQ(p["blocks"][1]["type"], "section");
    EXPECT_EQ(p["blocks"][1]["text"]["type"], "mrkdwn");
    EXPECT_LE(p["blocks"][1]["text"]["text"].get<std::string>().size(), 3000u);
    EXPECT_NE(p["blocks"][1]["text"]["text"].get<std::string>().find("idle"), std::string::npos);
}

void expect_teams(const json& p, const std::string& subject) {
    // A Teams Workflows webhook takes a message with one Adaptive Card attachment.
    EXPECT_EQ(p["type"], "message");
    ASSERT_EQ(p["attachments"].size(), 1u);
    const json& a = p["attachments"][0];
    EXPECT_EQ(a["contentType"], "application/vnd.microsoft.card.adaptive");
    const json& card = a["content"];
    EXPECT_EQ(card["type"], "AdaptiveCard");
    EXPECT_EQ(card["$schema"], "http://adaptivecards.io/schemas/adaptive-card.json");
    EXPECT_EQ(card["version"], "1.4");
    ASSERT_GE(card["body"].size(), 2u);
    for (const json& block : card["body"]) {
        EXPECT_EQ(block["type"], "TextBlock");
        EXPECT_TRUE(block["text"].is_string());
        EXPECT_EQ(block["wrap"], true);
    }
    EXPECT_EQ(card["body"][0]["text"], subject);
}

TEST_F(DeliveryWebhook, PayloadsCarryTheDocumentedFieldsAndTheFigures) {
    const std::string subject = admin_subject(m_db);
    Server receiver = start_receiver(m_dir);
    ASSERT_GT(receiver.port, 0) << receiver.process->err();
    configure(receiver.port, "");

    const test::RunResult dry = digest({"--dry-run"});
    ASSERT_EQ(dry.exit_code, 0) << dry.err;
    EXPECT_NE(dry.out.find("would send admin admin → webhook.chat (slack, http://127.0.0.1:" +
                           std::to_string(receiver.port) + "/…)"),
              std::string::npos)
        << dry.out;
    EXPECT_NE(dry.out.find("1 digest, 3 deliveries; nothing sent (--dry-run)"), std::string::npos)
        << dry.out;
    expect_no_secret(dry.out + dry.err);
    EXPECT_TRUE(received(m_dir).empty()) << "--dry-run sent something";

    const test::RunResult sent = digest();
    ASSERT_EQ(sent.exit_code, 0) << sent.err;
    expect_no_secret(sent.out + sent.err);
    EXPECT_EQ(lines_of(sent.out).size(), 3u) << sent.out;
    const std::vector<json> posts = received(m_dir);
    ASSERT_EQ(posts.size(), 3u);
    std::map<std::string, json> by_path;
    for (const json& p : posts) {
        EXPECT_EQ(p["content_type"], "application/json; charset=utf-8");
        by_path[p["path"]] = json::parse(p["body"].get<std::string>());
    }
    ASSERT_EQ(by_path.size(), 3u);
    expect_slack(by_path.at(k_slack_path), subject);
    expect_teams(by_path.at(k_teams_path), subject);

    const json& j = by_path.at(k_json_path);
    EXPECT_EQ(j["source"], "gua");
    EXPECT_EQ(j["event"], "digest");
    EXPECT_EQ(j["kind"], "admin");
    EXPECT_EQ(j["name"], "admin");
    EXPECT_EQ(j["address"], "ops@example.org");
    EXPECT_EQ(j["subject"], subject);
    EXPECT_TRUE(j["text"].is_string());
    EXPECT_NE(j["html"].get<std::string>().find("<html"), std::string::npos);
    // The figures: the history's own integration of the later week, not gua's output.
    EXPECT_NEAR(j["digest"]["idle_held_gpu_hours"].get<double>(), m_truth.week[1].at("*").idle_held,
                1e-9);
    EXPECT_NEAR(j["digest"]["active_gpu_hours"].get<double>(), m_truth.week[1].at("*").active,
                1e-9);
    RecordProperty("admin_idle_held_gpu_hours", j["digest"]["idle_held_gpu_hours"].dump());
}

TEST_F(DeliveryWebhook, AFailingServerIsRetriedWithDoublingBackoff) {
    Server receiver = start_receiver(m_dir, 2); // 500 to the first two posts, then 200
    ASSERT_GT(receiver.port, 0) << receiver.process->err();
    configure(receiver.port, ""); // writes the URL files
    // Only the JSON webhook: one message, so the receiver's posts are its attempts.
    const std::string only_json = "[digest]\nadmin = \"ops@example.org\"\n[webhook.hook]\n"
                                  "kind = \"json\"\nurl_file = \"" +
                                  m_dir.file("json-url") +
                                  "\"\n[delivery]\nattempts = 3\nbackoff = \"300ms\"\n";
    write_file(m_dir.file("gua.toml"), only_json);

    const test::RunResult r = digest();
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<json> posts = received(m_dir);
    ASSERT_EQ(posts.size(), 3u);
    const double gap1 = posts[1]["t"].get<double>() - posts[0]["t"].get<double>();
    const double gap2 = posts[2]["t"].get<double>() - posts[1]["t"].get<double>();
    RecordProperty("retry_gaps_s", std::to_string(gap1) + " " + std::to_string(gap2));
    EXPECT_GE(gap1, 0.3);
    EXPECT_GE(gap2, 0.6) << "the backoff doubles";
    EXPECT_GT(gap2, gap1 * 1.5);
    // One stderr line per failed attempt, naming the attempt, without the URL's path.
    const std::vector<std::string> errs = lines_of(r.err);
    ASSERT_EQ(errs.size(), 2u) << r.err;
    EXPECT_NE(errs[0].find("webhook.hook for admin admin: attempt 1 of 3 failed"),
              std::string::npos)
        << errs[0];
    EXPECT_NE(errs[0].find("HTTP 500"), std::string::npos) << errs[0];
    EXPECT_NE(errs[0].find("retrying in 300ms"), std::string::npos) << errs[0];
    EXPECT_NE(errs[1].find("attempt 2 of 3 failed"), std::string::npos) << errs[1];
    EXPECT_NE(errs[1].find("retrying in 600ms"), std::string::npos) << errs[1];
    EXPECT_NE(r.out.find("sent admin admin via webhook.hook (attempt 3)"), std::string::npos)
        << r.out;
    expect_no_secret(r.out + r.err);
}

TEST_F(DeliveryWebhook, ADownServerEndsInOneLineAndExitOne) {
    Server receiver = start_receiver(m_dir, 1000); // always 500
    ASSERT_GT(receiver.port, 0);
    configure(receiver.port, "");
    write_file(m_dir.file("gua.toml"), "[digest]\nadmin = \"ops@example.org\"\n[webhook.hook]\n"
                                       "kind = \"json\"\nurl_file = \"" +
                                           m_dir.file("json-url") +
                                           "\"\n[delivery]\nattempts = 2\nbackoff = \"100ms\"\n");
    const test::RunResult r = digest();
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(received(m_dir).size(), 2u);
    const std::vector<std::string> errs = lines_of(r.err);
    ASSERT_FALSE(errs.empty());
    EXPECT_NE(errs.back().find("1 of 1 deliveries failed; the first: webhook.hook for admin "
                               "admin: webhook.hook: http://127.0.0.1:"),
              std::string::npos)
        << r.err;
    EXPECT_NE(errs.back().find("/…: HTTP 500"), std::string::npos) << r.err;
    expect_no_secret(r.out + r.err);

    // Nobody listening at all: connection refused, retried, the same one line.
    receiver.process.reset();
    const test::RunResult refused = digest();
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_NE(lines_of(refused.err).back().find("1 of 1 deliveries failed"), std::string::npos)
        << refused.err;
    expect_no_secret(refused.out + refused.err);
}

TEST_F(DeliveryWebhook, BadSettingsAreOneLineAndExitTwo) {
    const std::vector<std::pair<std::string, std::string>> cases{
        {"[webhook.x]\nkind = \"discord\"\nurl = \"http://127.0.0.1:1/\"\n", "webhook.x.kind"},
        {"[webhook.x]\nkind = \"slack\"\n", "exactly one of url and url_file"},
        {"[webhook.x]\nkind = \"json\"\nurl = \"ftp://x/\"\n", "webhook.x.url"},
        {"[webhook.x]\nkind = \"json\"\nurl = \"http://x/\"\nfor = \"everyone\"\n",
         "webhook.x.for"},
        {"[webhook.x]\nkind = \"json\"\nurl_file = \"/nonexistent/url\"\n",
         "webhook.x.url_file /nonexistent/url: cannot read"},
        {"[mail]\nurl = \"http://mail.example.org\"\nfrom = \"a@b.c\"\n", "mail.url"},
        {"[mail]\nurl = \"smtp://mail.example.org\"\n", "mail.from"},
        {"[mail]\nurl = \"smtp://m\"\nfrom = \"a@b.c\"\nusername = \"u\"\n", "mail.password_file"},
        {"[mail]\nurl = \"smtp://m\"\nfrom = \"a@b.c\"\nstarttls = \"maybe\"\n", "mail.starttls"},
        {"[mail]\nurl = \"smtp://m\"\nfrom = \"a@b.c\"\ntimeout = \"forever\"\n", "mail.timeout"},
        {"[mail]\nurl = \"smtp://m\"\nfrom = \"a@b.c\"\nsmarthost = \"x\"\n", "unknown key"},
        {"[delivery]\nattempts = 0\n", "delivery.attempts"},
        {"[delivery]\nbackoff = \"2h\"\n", "delivery.backoff"},
        {"[delivery]\nqueue = 2.5\n", "delivery.queue"},
    };
    for (const auto& [toml, expected] : cases) {
        write_file(m_dir.file("gua.toml"), toml);
        const test::RunResult r = digest();
        EXPECT_EQ(r.exit_code, 2) << toml << r.err;
        EXPECT_EQ(lines_of(r.err).size(), 1u) << toml << r.err;
        EXPECT_NE(r.err.find(expected), std::string::npos) << toml << r.err;
    }
}

} // namespace webhook_test
} // namespace gua::notify_test
