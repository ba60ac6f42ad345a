// SPDX-License-Identifier: Apache-2.0
// Mail encoding: base64 against RFC 4648's test vectors, an RFC 2047 subject decoded by Python's
// email package, the RFC 5322 date against Python's formatting, and redacted webhook URLs.
#include "notify/curl_send.hpp"
#include "notify/mime.hpp"
#include "notify/servers.hpp"

#include <gtest/gtest.h>

namespace gua::notify {
namespace mime_test { // named after the file: unique in a unity batch

TEST(NotifyMime, Base64MatchesRfc4648Vectors) {
    const std::vector<std::pair<std::string, std::string>> vectors{{"", ""},
                                                                   {"f", "Zg=="},
                                                                   {"fo", "Zm8="},
                                                                   {"foo", "Zm9v"},
                                                                   {"foob", "Zm9vYg=="},
                                                                   {"fooba", "Zm9vYmE="},
                                                                   {"foobar", "Zm9vYmFy"}};
    for (const auto& [in, out] : vectors) {
        EXPECT_EQ(base64(in), out) << in;
    }
}

TEST(NotifyMime, NonAsciiSubjectsAreEncodedWordsPythonDecodes) {
    EXPECT_EQ(encode_header_text("gua: 12.5 idle-held GPU-hours"), "gua: 12.5 idle-held GPU-hours");
    // 40 two-byte and three-byte characters: several encoded words, none split in a character.
    std::string subject = "gua: Müller's Woche — ";
    for (int i = 0; i < 20; ++i) {
        subject += "é€";
    }
    const std::string encoded = encode_header_text(subject);
    for (const std::string& line : notify_test::lines_of(encoded)) {
        std::string word = line;
        word.erase(0, word.find_first_not_of(" \r"));
        while (!word.empty() && word.back() == '\r') {
            word.pop_back();
        }
        EXPECT_LE(word.size(), 75u) << word;
        EXPECT_TRUE(word.starts_with("=?UTF-8?B?")) << word;
    }
    const test::RunResult r = test::run(
        notify_test::k_python, {"-c",
                                "import sys, email.header; print(str(email.header.make_header("
                                "email.header.decode_header(sys.argv[1]))), end='')",
                                encoded});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, subject);
}

TEST(NotifyMime, DatesAreRfc5322InUtc) {
    const TimeUs t = 1'795'805'400 * k_us_per_second; // a moment in late November 2026
    const test::RunResult r = test::run(
        notify_test::k_python,
        {"-c", "import datetime, email.utils; print(email.utils.format_datetime("
               "datetime.datetime.fromtimestamp(1795805400, datetime.timezone.utc)), end='')"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(mail_date(t), r.out);
}

TEST(NotifyMime, WebhookUrlsAreRedactedAfterTheHost) {
    EXPECT_EQ(redact_url("https://hooks.slack.com/services/T0/B0/secret"),
              "https://hooks.slack.com/…");
    EXPECT_EQ(redact_url("http://127.0.0.1:8080/hook?token=secret"), "http://127.0.0.1:8080/…");
    EXPECT_EQ(redact_url("https://example.org?sig=secret"), "https://example.org/…");
    EXPECT_EQ(redact_url("smtp://mail.example.org:587"), "smtp://mail.example.org:587");
}

} // namespace mime_test
} // namespace gua::notify
