// SPDX-License-Identifier: Apache-2.0
// The digest's subject line, plain-text body and JSON.
#include "core/duration.hpp"
#include "core/time.hpp"
#include "report/digest.hpp"
#include "report/text_sections.hpp"

#include <fmt/format.h>

namespace gua::report {

namespace {

std::string who(const DigestFigures& f) {
    if (f.kind == "admin") {
        return "all GPUs";
    }
    return f.kind == "team" ? "team " + f.name : f.name;
}

std::string signed_pct(const DigestTrend& t) {
    const std::optional<double> pct = t.change_pct();
    return pct ? fmt::format(" ({:+.1f}%)", *pct) : std::string(" (none before)");
}

std::string trend_line(const char* label, const DigestTrend& t) {
    return fmt::format("  {:<12} {:.2f} GPU-hours, {:.2f} the period before: {:+.2f}{}\n", label,
                       t.now, t.previous, t.change(), signed_pct(t));
}

void append_sessions(std::string& out, const DigestFigures& f) {
    if (f.worst_sessions.empty()) {
        return;
    }
    out += "\nLongest idle-held stretches (the card's idle-held time)\n";
    for (const DigestSession& s : f.worst_sessions) {
        out += fmt::format("  GPU {} {}{}: {} → {}, {:.2f} GPU-hours idle-held\n", s.gpu, s.model,
                           s.host.empty() ? "" : " on " + s.host, format_iso8601(s.from),
                           format_iso8601(s.to), s.idle_held_hours);
    }
}

/// `text` in lines of at most ~76 columns (words never split), each indented by two spaces.
std::string wrap_remedy(const std::string& text) {
    std::string out;
    std::size_t line = 0;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find(' ', start);
        end = end == std::string::npos ? text.size() : end;
        const std::string word = text.substr(start, end - start);
        if (line > 0 && line + 1 + word.size() > 76) {
            out += "\n";
            line = 0;
        }
        out += line == 0 ? "  " + word : " " + word;
        line += (line == 0 ? 2 : 1) + word.size();
        start = end + 1;
    }
    return out + "\n";
}

void append_advice(std::string& out, const DigestFigures& f) {
    if (!f.advice) {
        return;
    }
    out += fmt::format("\nWhat to do: {}\n", f.advice->title);
    out += wrap_remedy(f.advice->remedy);
    out += fmt::format("  It addresses {:.2f} GPU-hours ({}) of this window.\n",
                       f.advice->addressed_gpu_hours,
                       format_money(f.advice->addressed_cents, f.currency));
}

} // namespace

std::string digest_subject(const DigestFigures& f) {
    std::string line = fmt::format("gua: {}: {:.1f} idle-held GPU-hours ({}) in {} to {}", who(f),
                                   f.idle_held_hours, format_money(f.idle_held_cents, f.currency),
                                   format_duration(f.to - f.from), format_iso8601(f.to));
    // One header line whatever a recorded name holds.
    for (char& c : line) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            c = ' ';
        }
    }
    return line;
}

std::string render_digest_text(const DigestFigures& f) {
    std::string out = fmt::format("GPU digest for {}: {} → {}\n\n", who(f), format_iso8601(f.from),
                                  format_iso8601(f.to));
    out += fmt::format("  {:<12} {:.2f} GPU-hours ({})\n", "active", f.active_hours,
                       format_money(f.active_cents, f.currency));
    out += fmt::format("  {:<12} {:.2f} GPU-hours ({}): memory held, SMs cold\n", "idle-held",
                       f.idle_held_hours, format_money(f.idle_held_cents, f.currency));
    if (f.allocated_unused_hours) {
        out += fmt::format("  {:<12} {:.2f} GPU-hours ({}): allocated, nothing ran\n",
                           "alloc-unused", *f.allocated_unused_hours,
                           format_money(f.allocated_unused_cents, f.currency));
    }
    out +=
        fmt::format("\nAgainst {} → {}\n", format_iso8601(f.previous_from), format_iso8601(f.from));
    out += trend_line("used", f.gpu_hours);
    out += trend_line("idle-held", f.idle_held_trend);
    append_sessions(out, f);
    append_advice(out, f);
    return out;
}

nlohmann::json digest_json(const DigestFigures& f) {
    using nlohmann::json;
    const auto trend = [](const DigestTrend& t) {
        const std::optional<double> pct = t.change_pct();
        return json{{"now", t.now},
                    {"previous", t.previous},
                    {"change", t.change()},
                    {"change_pct", pct ? json(*pct) : json(nullptr)}};
    };
    json sessions = json::array();
    for (const DigestSession& s : f.worst_sessions) {
        sessions.push_back({{"gpu", s.gpu},
                            {"model", s.model},
                            {"host", s.host},
                            {"from", format_iso8601(s.from)},
                            {"to", format_iso8601(s.to)},
                            {"idle_held_gpu_hours", s.idle_held_hours}});
    }
    json advice = nullptr;
    if (f.advice) {
        advice = {{"id", f.advice->id},
                  {"title", f.advice->title},
                  {"remedy", f.advice->remedy},
                  {"addressed_gpu_hours", f.advice->addressed_gpu_hours},
                  {"addressed_cents", f.advice->addressed_cents}};
    }
    return {
        {"kind", f.kind},
        {"name", f.name},
        {"window", {{"from", format_iso8601(f.from)}, {"to", format_iso8601(f.to)}}},
        {"previous_window",
         {{"from", format_iso8601(f.previous_from)}, {"to", format_iso8601(f.from)}}},
        {"gpu_hours", f.gpu_hours.now},
        {"active_gpu_hours", f.active_hours},
        {"idle_held_gpu_hours", f.idle_held_hours},
        {"allocated_unused_gpu_hours",
         f.allocated_unused_hours ? json(*f.allocated_unused_hours) : json(nullptr)},
        {"cost",
         {{"currency", f.currency},
          {"active_cents", f.active_cents},
          {"idle_held_cents", f.idle_held_cents},
          {"allocated_unused_cents", f.allocated_unused_cents},
          {"total_cents", f.active_cents + f.idle_held_cents + f.allocated_unused_cents}}},
        {"trend",
         {{"gpu_hours", trend(f.gpu_hours)}, {"idle_held_gpu_hours", trend(f.idle_held_trend)}}},
        {"worst_sessions", sessions},
        {"recommendation", advice}};
}

} // namespace gua::report
