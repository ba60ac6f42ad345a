// SPDX-License-Identifier: Apache-2.0
// The digest: one person's, team's or the admin's figures of a window, taken from the report
// models of that window and of the previous one of equal length (never computed a second time).
#pragma once

#include "core/time.hpp"
#include "report/digest_message.hpp"
#include "report/model.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gua::report {

/// One stretch of a card's timeline with idle-held time, back to back: when, where, how much.
struct DigestSession {
    int gpu = 0;                ///< driver index
    std::string model;          ///< the card's model
    std::string host;           ///< the report's host
    TimeUs from = 0;            ///< start of the first timeline bucket with idle-held time
    TimeUs to = 0;              ///< end of the last one
    double idle_held_hours = 0; ///< idle-held card-hours in [from, to)
};

/// A figure now and in the previous window; change and change_pct follow from the two.
struct DigestTrend {
    double now = 0;
    double previous = 0;
    double change() const { return now - previous; }
    /// Change in percent of the previous figure; nullopt when that was 0.
    std::optional<double> change_pct() const;
};

/// The one §8 recommendation that names the recipient (the admin: the first of §8).
struct DigestAdvice {
    std::string id;
    std::string title;
    std::string remedy;
    double addressed_gpu_hours = 0;
    std::int64_t addressed_cents = 0;
};

/// Everything a digest states. Hours are GPU-hours, money cents in `currency`.
struct DigestFigures {
    std::string kind; ///< "user", "team" or "admin"
    std::string name;
    TimeUs from = 0;
    TimeUs to = 0;
    TimeUs previous_from = 0;
    double active_hours = 0;
    double idle_held_hours = 0;
    /// Allocated-unused GPU-hours; nullopt when the window recorded no allocation.
    std::optional<double> allocated_unused_hours;
    std::string currency = "USD";
    std::int64_t active_cents = 0;
    std::int64_t idle_held_cents = 0;
    std::int64_t allocated_unused_cents = 0;
    DigestTrend gpu_hours;                     ///< active + idle-held
    DigestTrend idle_held_trend;               ///< idle-held
    std::vector<DigestSession> worst_sessions; ///< most idle-held first
    std::optional<DigestAdvice> advice;
};

/// The figures of identity `name` (a §4 row of `now`, grouped as `now` is) against its row in
/// `previous` (0 when absent there). `sessions_from` supplies the worst sessions (the report
/// filtered to the user; nullptr: none). Returns nullopt when `now` has no row for `name`.
std::optional<DigestFigures> identity_digest(const ReportModel& now, const ReportModel& previous,
                                             const std::string& kind, const std::string& name,
                                             const ReportModel* sessions_from);

/// The admin's figures: the whole window's headline and cost against the previous window's.
DigestFigures admin_digest(const ReportModel& now, const ReportModel& previous);

/// The `count` longest idle-held stretches of `m`'s card timelines, most idle-held first.
std::vector<DigestSession> worst_sessions(const ReportModel& m, std::size_t count);

/// "gua: alice: 12.3 idle-held GPU-hours ($45.00) in 7d to 2026-11-29T00:00:00Z".
std::string digest_subject(const DigestFigures& f);

/// The plain-text body.
std::string render_digest_text(const DigestFigures& f);

/// The self-contained HTML body; each number carries data-field/data-value naming its key in
/// digest_json().
std::string render_digest_html(const DigestFigures& f);

/// The figures as JSON (docs/notify.md).
nlohmann::json digest_json(const DigestFigures& f);

/// The message of `f` to `address`.
DigestMessage digest_message(const DigestFigures& f, const std::string& address);

} // namespace gua::report
