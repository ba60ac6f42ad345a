// SPDX-License-Identifier: Apache-2.0
// Webhook payloads, from the documented fields of each service.
#include "notify/payload.hpp"

#include "core/printable.hpp"

#include <string_view>

namespace gua::notify {

namespace {

using nlohmann::json;

/// Slack's mrkdwn control characters escaped (its documented &amp; &lt; &gt;).
std::string slack_escape(std::string_view text) {
    std::string out;
    for (const char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

/// At most `limit` bytes of `text`, cut on a character boundary and marked with "…".
std::string clip(const std::string& text, std::size_t limit) {
    if (text.size() <= limit) {
        return text;
    }
    std::size_t end = limit - 3; // "…" is 3 bytes
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
        --end;
    }
    return text.substr(0, end) + "…";
}

} // namespace

json slack_payload(const Notice& n) {
    const std::string subject = valid_utf8(n.subject);
    const std::string text = valid_utf8(n.text);
    // A code block keeps the text's columns; the section text may hold 3000 characters.
    const std::string body = clip(slack_escape(text), 3000 - 6);
    return json{
        {"text", slack_escape(subject + "\n\n" + text)},
        {"blocks",
         json::array(
             {json{{"type", "header"},
                   {"text",
                    {{"type", "plain_text"}, {"text", clip(subject, 150)}, {"emoji", false}}}},
              json{{"type", "section"},
                   {"text", {{"type", "mrkdwn"}, {"text", "```" + body + "```"}}}}})}};
}

json teams_payload(const Notice& n) {
    json body = json::array();
    body.push_back(json{{"type", "TextBlock"},
                        {"text", valid_utf8(n.subject)},
                        {"weight", "Bolder"},
                        {"size", "Medium"},
                        {"wrap", true}});
    // One TextBlock per line: a TextBlock's markdown would join lines of the text.
    bool gap = false;
    std::string_view rest = n.text;
    while (!rest.empty()) {
        const std::size_t nl = rest.find('\n');
        const std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
        if (line.find_first_not_of(' ') == std::string_view::npos) {
            gap = true;
            continue;
        }
        body.push_back(json{{"type", "TextBlock"},
                            {"text", valid_utf8(line)},
                            {"fontType", "Monospace"},
                            {"spacing", gap ? "Medium" : "None"},
                            {"wrap", true}});
        gap = false;
    }
    const json card{{"$schema", "http://adaptivecards.io/schemas/adaptive-card.json"},
                    {"type", "AdaptiveCard"},
                    {"version", "1.4"},
                    {"body", body},
                    {"msteams", {{"width", "Full"}}}};
    return json{{"type", "message"},
                {"attachments",
                 json::array({json{{"contentType", "application/vnd.microsoft.card.adaptive"},
                                   {"contentUrl", nullptr},
                                   {"content", card}}})}};
}

json json_payload(const Notice& n) {
    json out = n.fields;
    out["source"] = "gua";
    out["event"] = n.event;
    out["subject"] = valid_utf8(n.subject);
    out["text"] = valid_utf8(n.text);
    return out;
}

json webhook_payload(const std::string& kind, const Notice& n) {
    if (kind == "slack") {
        return slack_payload(n);
    }
    if (kind == "teams") {
        return teams_payload(n);
    }
    return json_payload(n);
}

} // namespace gua::notify
