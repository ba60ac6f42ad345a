// SPDX-License-Identifier: Apache-2.0
// `gua digest` by mail to a real SMTP server on loopback (Debian's aiosmtpd) that requires
// STARTTLS and AUTH: every digest with an address arrives once, with RFC 5322 headers and both
// MIME parts equal to the rendered bodies (parsed by Python's email package, not by gua); a
// wrong password is one clear line and exit 1, and the password is never printed.
#include "digest/history.hpp"
#include "notify/servers.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <set>

namespace gua::notify_test {
namespace smtp_test { // named after the file: unique in a unity batch

using nlohmann::json;

constexpr TimeUs k_week0 = 1'794'182'400 * k_us_per_second; // 2026-11-09T00:00:00Z
const std::string k_w1 = "2026-11-16T00:00:00Z";
const std::string k_w2 = "2026-11-23T00:00:00Z";
const std::string k_password = "Corr3ct-h0rse";

class DeliverySmtp : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!have_aiosmtpd()) {
            GTEST_SKIP() << "python3-aiosmtpd is not installed (scripts/install-deps.sh --test "
                            "installs it): no SMTP server to deliver to";
        }
        m_db = m_dir.file("history.db");
        digest_test::write_history(m_db, k_week0);
        m_mail = m_dir.file("mail");
        std::filesystem::create_directory(m_mail);
        m_smtp = start_smtp(m_dir, m_mail, "gua", k_password);
        ASSERT_GT(m_smtp.port, 0) << m_smtp.process->err();
    }

    void configure(const std::string& password, const std::string& extra = "") {
        write_file(m_dir.file("password"), password + "\n");
        write_file(m_dir.file("gua.toml"),
                   "[teams]\nalice = \"vision\"\nbob = \"vision\"\ncarol = \"nlp\"\n\n"
                   "[digest]\nadmin = \"ops@example.org\"\n\n[digest.recipients]\n"
                   "alice = \"alice@example.org\"\nvision = \"vision-leads@example.org\"\n\n"
                   "[mail]\nurl = \"smtp://127.0.0.1:" +
                       std::to_string(m_smtp.port) +
                       "\"\nfrom = \"gua@example.org\"\nusername = \"gua\"\npassword_file = \"" +
                       m_dir.file("password") + "\"\nca_file = \"" + m_dir.file("ca.pem") +
                       "\"\ndomain = \"example.org\"\ntimeout = \"20s\"\n\n" + extra);
    }

    test::RunResult digest(std::vector<std::string> extra) const {
        std::vector<std::string> args{"digest", "--db", m_db,   "--config", m_dir.file("gua.toml"),
                                      "--from", k_w1,   "--to", k_w2};
        args.insert(args.end(), extra.begin(), extra.end());
        return test::run_gua(args);
    }

    /// The saved mails, parsed by tests/notify/parse_mail.py, with their envelope.
    std::vector<json> mails() const {
        std::vector<json> out;
        for (int n = 1; std::filesystem::exists(m_mail + "/" + std::to_string(n) + ".eml"); ++n) {
            const std::string base = m_mail + "/" + std::to_string(n);
            const test::RunResult r =
                test::run(k_python, {k_scripts + "parse_mail.py", base + ".eml"});
            EXPECT_EQ(r.exit_code, 0) << r.err;
            json m = json::parse(r.out);
            m["envelope"] = test::read_text(base + ".env");
            out.push_back(m);
        }
        return out;
    }

    test::TempDir m_dir;
    std::string m_db;
    std::string m_mail;
    Server m_smtp;
};

std::string crlf_to_lf(std::string s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (!(s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n')) {
            out += s[i];
        }
    }
    return out;
}

TEST_F(DeliverySmtp, EveryDigestArrivesOverStartTlsWithAuthAndBothParts) {
    configure(k_password);
    // The rendered bodies and subjects, from the same run's files (no transport is needed).
    const std::string out = m_dir.file("out");
    const test::RunResult r = digest({"--output-dir", out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Addresses: [digest.recipients], the admin's, user@domain for bob; team nlp has none.
    const std::map<std::string, std::string> expected{{"admin-admin", "ops@example.org"},
                                                      {"team-vision", "vision-leads@example.org"},
                                                      {"user-alice", "alice@example.org"},
                                                      {"user-bob", "bob@example.org"}};
    EXPECT_NE(r.err.find("no smtp for team nlp"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(k_password), std::string::npos);
    const std::vector<json> got = mails();
    ASSERT_EQ(got.size(), expected.size()) << r.out << r.err;
    std::set<std::string> seen;
    const double now_s =
        static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
    for (const json& m : got) {
        const std::string to = m["headers"]["To"];
        const auto it = std::find_if(expected.begin(), expected.end(),
                                     [&](const auto& e) { return e.second == to; });
        ASSERT_NE(it, expected.end()) << to;
        EXPECT_TRUE(seen.insert(it->first).second) << "twice: " << to;
        const json files = json::parse(test::read_text(out + "/" + it->first + ".json"));
        EXPECT_EQ(m["headers"]["From"], "gua@example.org");
        EXPECT_EQ(m["headers"]["Subject"], files["subject"]);
        EXPECT_EQ(m["headers"]["MIME-Version"], "1.0");
        EXPECT_TRUE(m["headers"]["Message-ID"].get<std::string>().ends_with("@example.org>"));
        EXPECT_NEAR(m["date_epoch"].get<double>(), now_s, 120.0);
        EXPECT_EQ(m["content_type"], "multipart/alternative");
        ASSERT_EQ(m["parts"].size(), 2u);
        EXPECT_EQ(m["parts"][0]["type"], "text/plain");
        EXPECT_EQ(m["parts"][0]["charset"], "utf-8");
        EXPECT_EQ(m["parts"][1]["type"], "text/html");
        EXPECT_EQ(crlf_to_lf(m["parts"][0]["text"]),
                  test::read_text(out + "/" + it->first + ".txt"));
        EXPECT_EQ(crlf_to_lf(m["parts"][1]["text"]),
                  test::read_text(out + "/" + it->first + ".html"));
        // The envelope: sender, the one recipient, over TLS (STARTTLS), logged in as gua.
        const std::string env = m["envelope"];
        EXPECT_NE(env.find("from=gua@example.org\n"), std::string::npos) << env;
        EXPECT_NE(env.find("to=" + to + "\n"), std::string::npos) << env;
        EXPECT_NE(env.find("tls=yes\n"), std::string::npos) << env;
        EXPECT_NE(env.find("login=gua\n"), std::string::npos) << env;
    }
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 5 + 4) << r.out; // files + sent
}

TEST_F(DeliverySmtp, AWrongPasswordIsOneClearLineAndExitOne) {
    configure("not-the-password", "[delivery]\nattempts = 1\n");
    const test::RunResult r = digest({"--for", "admin"});
    EXPECT_EQ(r.exit_code, 1);
    const std::vector<std::string> errs = lines_of(r.err);
    ASSERT_FALSE(errs.empty());
    EXPECT_NE(errs.back().find("1 of 1 deliveries failed; the first: smtp for admin admin: mail "
                               "to ops@example.org via smtp://127.0.0.1:"),
              std::string::npos)
        << r.err;
    EXPECT_NE(errs.back().find("Login denied"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("not-the-password"), std::string::npos) << r.err;
    EXPECT_TRUE(mails().empty());
}

TEST_F(DeliverySmtp, StartTlsNoneAgainstAServerThatRequiresItIsRefused) {
    configure(k_password, "[delivery]\nattempts = 1\n");
    std::string text = test::read_text(m_dir.file("gua.toml"));
    text.replace(text.find("timeout = "), 0, "starttls = \"none\"\n");
    write_file(m_dir.file("gua.toml"), text);
    const test::RunResult r = digest({"--for", "admin"});
    EXPECT_EQ(r.exit_code, 1) << r.out;
    // The attempt's log line, then the one error line.
    const std::vector<std::string> errs = lines_of(r.err);
    ASSERT_EQ(errs.size(), 2u) << r.err;
    EXPECT_NE(errs[0].find("delivery: smtp for admin admin: failed after 1 attempt: "),
              std::string::npos)
        << r.err;
    EXPECT_NE(errs[1].find("1 of 1 deliveries failed"), std::string::npos) << r.err;
    EXPECT_TRUE(mails().empty()) << "the server requires STARTTLS";
}

} // namespace smtp_test
} // namespace gua::notify_test
