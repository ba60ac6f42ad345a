// SPDX-License-Identifier: Apache-2.0
// Names other people choose (user, process, host and model names, Prometheus labels) through every
// output format: JSON stays valid UTF-8, CSV cannot start a formula, text carries no control
// character to a terminal, HTML has none either.
#include "live/render.hpp"
#include "report/render.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace gua::report {
namespace hostile_names_test {

const std::string k_invalid = "bad\xff\xfe-utf8";               // not UTF-8 at all
const std::string k_escape = "\x1b]52;c;aGk=\a\x1b[2Jwiped";    // OSC 52 + clear screen
const std::string k_formula = "=HYPERLINK(\"http://x\",\"y\")"; // a spreadsheet formula
const std::string k_c1 = "\xc2\x9b"
                         "31mred"; // U+009B CSI

ReportModel hostile_model() {
    ReportModel m;
    m.window_label = "7d";
    m.host = "host" + k_escape;
    for (const std::string& name : {k_invalid, k_escape, k_formula, k_c1, std::string("+1-1"),
                                    std::string("@SUM(A1)"), std::string("-2+3")}) {
        IdentityRow r;
        r.name = name;
        r.gpu_hours = 1.5;
        m.identities.push_back(r);
    }
    GpuRow g;
    g.model = "NVIDIA " + k_invalid;
    g.host = "h\r-1";
    m.gpus.push_back(g);
    return m;
}

bool has_control(const std::string& s, bool allow_newline) {
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && !(allow_newline && (c == '\n' || c == '\t' || c == '\r'))) || u == 0x7f) {
            return true;
        }
    }
    return s.find("\xc2\x9b") != std::string::npos;
}

bool valid_utf8(const std::string& s) {
    // nlohmann's strict dump throws on invalid UTF-8: a convenient validator.
    try {
        (void)nlohmann::json(s).dump();
        return true;
    } catch (const nlohmann::json::exception&) {
        return false;
    }
}

TEST(HostileNames, JsonIsValidUtf8WithInvalidBytesReplaced) {
    const std::string text = render_json(hostile_model());
    ASSERT_TRUE(valid_utf8(text));
    const nlohmann::json j = nlohmann::json::parse(text);
    const std::string all = j.dump();
    EXPECT_NE(all.find("bad\xef\xbf\xbd\xef\xbf\xbd-utf8"), std::string::npos) << all;
    EXPECT_EQ(all.find('\x1b'), std::string::npos);
}

TEST(HostileNames, CsvNeutralisesFormulasButNotNumbers) {
    const std::string csv = render_csv(hostile_model(), CsvTable::identities);
    EXPECT_NE(csv.find("\r\n\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\","), std::string::npos)
        << csv;
    EXPECT_NE(csv.find("\r\n'+1-1,"), std::string::npos) << csv;
    EXPECT_NE(csv.find("\r\n'@SUM(A1),"), std::string::npos) << csv;
    EXPECT_NE(csv.find("\r\n'-2+3,"), std::string::npos) << csv;
    const std::string gpus = render_csv(hostile_model(), CsvTable::gpus);
    EXPECT_NE(gpus.find("\r\n\"h\r-1\","), std::string::npos) << gpus; // CR is no formula lead
}

TEST(HostileNames, TextShowsControlCharactersAsEscapes) {
    for (const bool color : {false, true}) {
        const std::string text = render_text(hostile_model(), TextOptions{60, color});
        EXPECT_EQ(text.find("\x1b]"), std::string::npos);
        EXPECT_EQ(text.find("\x1b[2J"), std::string::npos);
        EXPECT_EQ(text.find('\a'), std::string::npos);
        EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos);
        EXPECT_EQ(text.find("\xff"), std::string::npos);
        EXPECT_NE(text.find("host\\x1b]52;c;aGk=\\x07\\x1b[2Jwiped"), std::string::npos) << text;
        if (!color) {
            EXPECT_EQ(text.find('\x1b'), std::string::npos);
        }
    }
}

TEST(HostileNames, HtmlHasNoControlCharactersAndValidUtf8) {
    const std::string page = render_html(hostile_model());
    EXPECT_FALSE(has_control(page, true));
    EXPECT_TRUE(valid_utf8(page));
    EXPECT_NE(page.find("]52;c;aGk=[2Jwiped"), std::string::npos);
}

TEST(HostileNames, NowJsonAndTextSurviveAProcessNameAUserChose) {
    live::NowModel m;
    m.host = "node" + k_escape;
    live::HolderNow h;
    h.user = "u" + k_invalid;
    h.command = "train" + k_invalid + k_escape;
    h.container_name = k_c1;
    m.holders.push_back(h);
    const std::string json = live::render_now_json(m);
    ASSERT_TRUE(valid_utf8(json));
    EXPECT_NE(nlohmann::json::parse(json).dump().find("trainbad\xef\xbf\xbd"), std::string::npos);
    const std::string text = live::render_now_text(m, live::NowTextOptions{});
    EXPECT_FALSE(has_control(text, true)) << text;
    EXPECT_TRUE(valid_utf8(text));
    EXPECT_NE(text.find("node\\x1b]52"), std::string::npos) << text;
}

} // namespace hostile_names_test
} // namespace gua::report
