// SPDX-License-Identifier: Apache-2.0
// The digest's HTML body: self-contained (inline style, no script, nothing fetched), each number
// marked with the digest JSON key it shows.
#include "core/time.hpp"
#include "report/digest.hpp"
#include "report/html_sections.hpp"
#include "report/text_sections.hpp"

#include <fmt/format.h>

namespace gua::report {

namespace {

constexpr const char* k_digest_style =
    "body{font:15px/1.45 system-ui,sans-serif;max-width:42em;margin:1em auto;padding:0 1em}"
    "table{border-collapse:collapse}td,th{padding:.2em .8em .2em 0;text-align:left}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}.muted{color:#666}";

std::string digest_hours(std::string_view path, double value) {
    return html::number(path, value, fmt::format("{:.2f}", value));
}

std::string digest_money(std::string_view path, std::int64_t cents, const std::string& currency) {
    return html::number(path, static_cast<double>(cents), format_money(cents, currency));
}

std::string state_row(const char* label, const std::string& what, std::string_view hours_path,
                      double h, std::string_view cents_path, std::int64_t c,
                      const std::string& currency) {
    return fmt::format("<tr><th>{}</th><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                       "<td class=\"muted\">{}</td></tr>\n",
                       label, digest_hours(hours_path, h), digest_money(cents_path, c, currency),
                       what);
}

std::string trend_row(const char* label, std::string_view key, const DigestTrend& t) {
    const std::string base = fmt::format("trend.{}.", key);
    const std::optional<double> pct = t.change_pct();
    const std::string pct_html =
        pct ? html::number(base + "change_pct", *pct, fmt::format("{:+.1f}%", *pct))
            : std::string("none before");
    return fmt::format(
        "<tr><th>{}</th><td class=\"n\">{}</td><td class=\"n\">{}</td>"
        "<td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n",
        label, digest_hours(base + "now", t.now), digest_hours(base + "previous", t.previous),
        html::number(base + "change", t.change(), fmt::format("{:+.2f}", t.change())), pct_html);
}

std::string sessions_html(const DigestFigures& f) {
    if (f.worst_sessions.empty()) {
        return "";
    }
    std::string out = "<h2>Longest idle-held stretches</h2>\n<table><tr><th>GPU</th><th>From"
                      "</th><th>To</th><th>Idle-held GPU-hours</th></tr>\n";
    for (std::size_t i = 0; i < f.worst_sessions.size(); ++i) {
        const DigestSession& s = f.worst_sessions[i];
        out += fmt::format(
            "<tr><td>GPU {} {}{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td></tr>\n", s.gpu,
            html::esc(s.model), s.host.empty() ? "" : " on " + html::esc(s.host),
            format_iso8601(s.from), format_iso8601(s.to),
            digest_hours(fmt::format("worst_sessions.{}.idle_held_gpu_hours", i),
                         s.idle_held_hours));
    }
    return out + "</table>\n";
}

std::string advice_html(const DigestFigures& f) {
    if (!f.advice) {
        return "";
    }
    return fmt::format(
        "<h2>What to do</h2>\n<p><strong>{}</strong></p>\n<p>{}</p>\n<p>It "
        "addresses {} GPU-hours ({}) of this window.</p>\n",
        html::esc(f.advice->title), html::prose(f.advice->remedy),
        digest_hours("recommendation.addressed_gpu_hours", f.advice->addressed_gpu_hours),
        digest_money("recommendation.addressed_cents", f.advice->addressed_cents, f.currency));
}

std::string who_html(const DigestFigures& f) {
    if (f.kind == "admin") {
        return "all GPUs";
    }
    return (f.kind == "team" ? "team " : "") + html::esc(f.name);
}

} // namespace

std::string render_digest_html(const DigestFigures& f) {
    std::string out = fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>"
        "<style>{}</style></head><body>\n<h1>GPU digest for {}</h1>\n<p class=\"muted\">{} → "
        "{}</p>\n<table>\n",
        html::esc(digest_subject(f)), k_digest_style, who_html(f), format_iso8601(f.from),
        format_iso8601(f.to));
    out += state_row("Active", "", "active_gpu_hours", f.active_hours, "cost.active_cents",
                     f.active_cents, f.currency);
    out += state_row("Idle-held", "memory held, SMs cold", "idle_held_gpu_hours", f.idle_held_hours,
                     "cost.idle_held_cents", f.idle_held_cents, f.currency);
    if (f.allocated_unused_hours) {
        out += state_row("Allocated-unused", "allocated, nothing ran", "allocated_unused_gpu_hours",
                         *f.allocated_unused_hours, "cost.allocated_unused_cents",
                         f.allocated_unused_cents, f.currency);
    }
    out += fmt::format("</table>\n<h2>Against {} → {}</h2>\n<table><tr><th></th><th>Now</th>"
                       "<th>Before</th><th>Change</th><th>%</th></tr>\n",
                       format_iso8601(f.previous_from), format_iso8601(f.from));
    out += trend_row("Used", "gpu_hours", f.gpu_hours);
    out += trend_row("Idle-held", "idle_held_gpu_hours", f.idle_held_trend);
    out += "</table>\n" + sessions_html(f) + advice_html(f) + "</body></html>\n";
    return out;
}

} // namespace gua::report
