// SPDX-License-Identifier: Apache-2.0
// Ground-truth harness: runs a scenario through the real `gua daemon` on the fake driver with a
// simulated clock (GUA_TEST_CLOCK_FILE, docs/TESTING.md), integrates the scenario over the
// card-ticks the daemon recorded, and holds `gua report` to that truth: within 1 pp per state
// and per identity, or the error covered by card-time the report flags as snapshot/unmeasured.
#pragma once

#include "core/time.hpp"
#include "e2e/daemon_e2e.hpp"
#include "e2e/truth_report.hpp"
#include "identity/user.hpp"
#include "support/ground_truth.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <set>
#include <sys/types.h>
#include <unistd.h>

namespace gua::e2e {

/// How a scenario is run: the daemon's interval and tick count, and the fake build.
struct TruthRun {
    double interval_s = 30;
    int ticks = 20;
    FakeVariant variant = FakeVariant::modern;
    double start_s = 600; ///< scenario time of the daemon's first poll (the rings are full)
};

/// What a run produced: the report, its figures and the truth over the recorded card-ticks.
struct TruthOutcome {
    json report;
    ReportFigures figures;
    std::map<std::string, test::CardTruth> truth; ///< by uuid
    std::map<std::string, double> truth_identity_s;
    std::map<std::string, std::set<std::string>> identity_cards; ///< cards each identity used
    std::set<std::string> unmeasurable; ///< cards without utilization (MIG instances)
    double span_s = 0; ///< scenario time from the first poll to the last tick's end
    double real_s = 0; ///< real time the daemon ran
};

/// The user label gua gives `uid` ("uid:1500" when the passwd database has no entry).
inline std::string user_label(std::uint32_t uid) {
    return identity::user_label(uid, identity::passwd_name(uid));
}

class TruthTest : public DaemonTest {
  protected:
    /// Starts a real process (`sleep`) as `uid` (root: directly), exports its pid as `env` for
    /// the scenario's `pid_env`, and returns the pid. The process is killed with the test.
    pid_t spawn_sleeper(std::uint32_t uid, const std::string& env) {
        std::vector<std::string> args;
        std::string program = "/bin/sleep";
        if (uid != 0) {
            program = "/usr/bin/setpriv";
            args = {"--reuid=" + std::to_string(uid), "--regid=" + std::to_string(uid),
                    "--clear-groups", "/bin/sleep"};
        }
        args.push_back("600");
        m_sleepers.push_back(std::make_unique<test::BackgroundProcess>(
            program, args, std::map<std::string, std::string>{}, m_dir.path(), env));
        const pid_t pid = m_sleepers.back()->pid();
        test::poll_until(
            [&] {
                std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
                std::string comm;
                return in >> comm && comm == "sleep";
            },
            5s);
        set_env(env, std::to_string(pid));
        return pid;
    }

    /// The clock file both the daemon's clock and the fake driver use.
    std::string clock_path() const { return m_dir.file("clock"); }

    /// Runs `scenario` (fake format plus `who` labels) and computes the truth over what the
    /// daemon recorded.
    TruthOutcome run_truth(const json& scenario, const TruthRun& run) {
        write_scenario(test::fake_scenario(scenario));
        set_clock(run.start_s);
        set_env("GUA_TEST_CLOCK_FILE", clock_path());
        const auto began = std::chrono::steady_clock::now();
        const test::RunResult r =
            run_daemon({"--interval", fmt::format("{}ms", std::llround(run.interval_s * 1000)),
                        "--ticks", std::to_string(run.ticks), "--quiet"},
                       run.variant, 60s);
        const double real_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
        EXPECT_EQ(r.exit_code, 0) << r.err;
        TruthOutcome out = evaluate(scenario, run);
        out.real_s = real_s;
        return out;
    }

    /// Computes truth and figures from the database and a report over it (the daemon ran).
    TruthOutcome evaluate(const json& scenario, const TruthRun& run) const {
        TruthOutcome out;
        test::RawDb raw(db());
        const auto rows = raw.rows("SELECT g.uuid AS uuid, c.t0_us AS t0, c.duration_us AS d "
                                   "FROM card_tick c JOIN gpu g ON g.id = c.gpu_id");
        if (rows.empty()) {
            ADD_FAILURE() << "the daemon recorded no card-tick";
            return out;
        }
        // The daemon's first poll happened at wall time min(t0) and scenario time start_s; its
        // simulated clock moves both together.
        TimeUs first = std::numeric_limits<TimeUs>::max();
        TimeUs last_end = 0;
        for (const auto& row : rows) {
            first = std::min<TimeUs>(first, std::stoll(row.at("t0")));
        }
        std::map<std::string, std::vector<test::Span>> spans;
        for (const auto& row : rows) {
            const TimeUs t0 = std::stoll(row.at("t0"));
            const DurationUs d = std::stoll(row.at("d"));
            last_end = std::max<TimeUs>(last_end, t0 + d);
            const double from = run.start_s + static_cast<double>(t0 - first) / 1e6;
            spans[row.at("uuid")].push_back({from, from + static_cast<double>(d) / 1e6});
        }
        out.span_s = static_cast<double>(last_end - first) / 1e6;
        const test::GroundTruth truth(scenario);
        for (const auto& [uuid, card_spans] : spans) {
            out.truth[uuid] = truth.integrate(uuid, card_spans);
            if (!truth.card(uuid).measurable) {
                out.unmeasurable.insert(uuid);
            }
            for (const auto& [who, s] : out.truth[uuid].identity_s) {
                out.truth_identity_s[who] += s;
                out.identity_cards[who].insert(uuid);
            }
        }
        out.report = report_over(first - k_us_per_hour, last_end + k_us_per_hour);
        out.figures = report_figures(out.report);
        return out;
    }

    /// `gua report --format json` over [from, to) with every identity listed.
    json report_over(TimeUs from, TimeUs to) const {
        const test::RunResult r =
            test::run_gua({"report", "--db", db(), "--from", format_iso8601(from), "--to",
                           format_iso8601(to), "--format", "json", "--top", "1000"});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.exit_code == 0 ? json::parse(r.out) : json::object();
    }

    /// The acceptance rule. For each measurable card and state: |gua − truth| ≤ 1 pp of the
    /// card's recorded time plus the card-time the report flags; a card without utilization
    /// (MIG) must be flagged whole. For each identity: the same bound over the cards it used.
    /// Identity GPU-seconds add up to the headline's active + idle-held GPU-seconds. Returns one
    /// line per card and identity with the errors, for the baseline printed by each test.
    std::string check(const TruthOutcome& o, const std::string& name) const {
        std::string lines;
        std::map<std::string, double> allowance; // per card: 1 pp + flagged seconds
        for (const auto& [uuid, t] : o.truth) {
            SCOPED_TRACE(name + " card " + uuid);
            const auto found = o.figures.cards.find(uuid);
            if (found == o.figures.cards.end()) {
                ADD_FAILURE() << "card " << uuid << " is recorded but not in the report";
                continue;
            }
            const ReportCard& g = found->second;
            const double rec = t.recorded_s;
            EXPECT_NEAR(g.total_s(), rec, 1e-3 + 1e-6 * rec)
                << "the report accounts for the card's recorded time";
            const double allowed = 0.01 * rec + g.flagged_s() + 1e-6;
            allowance[uuid] = allowed;
            if (o.unmeasurable.contains(uuid)) {
                EXPECT_GE(g.flagged_s(), rec - 1e-3)
                    << "a card without utilization must be flagged unmeasured whole";
                lines += fmt::format("  {} {}: no utilization; flagged {:.1f} of {:.1f} s\n", name,
                                     uuid, g.flagged_s(), rec);
                continue;
            }
            const auto pp = [&](double s) { return 100.0 * s / rec; };
            const double e_active = std::abs(g.active_s - t.active_s);
            const double e_held = std::abs(g.idle_held_s - t.idle_held_s);
            const double e_idle = std::abs(g.truly_idle_s - t.truly_idle_s);
            EXPECT_LE(e_active, allowed)
                << fmt::format("active: gua {:.2f} % truth {:.2f} % (flagged {:.2f} %)",
                               pp(g.active_s), pp(t.active_s), pp(g.flagged_s()));
            EXPECT_LE(e_held, allowed)
                << fmt::format("idle-held: gua {:.2f} % truth {:.2f} % (flagged {:.2f} %)",
                               pp(g.idle_held_s), pp(t.idle_held_s), pp(g.flagged_s()));
            EXPECT_LE(e_idle, allowed)
                << fmt::format("truly idle: gua {:.2f} % truth {:.2f} % (flagged {:.2f} %)",
                               pp(g.truly_idle_s), pp(t.truly_idle_s), pp(g.flagged_s()));
            lines += fmt::format("  {} GPU {}: active {:.1f}/{:.1f} idle-held {:.1f}/{:.1f} "
                                 "truly-idle {:.1f}/{:.1f} "
                                 "% (gua/truth), flagged {:.1f} %, worst error {:.1f} pp\n",
                                 name, g.index, pp(g.active_s), pp(t.active_s), pp(g.idle_held_s),
                                 pp(t.idle_held_s), pp(g.truly_idle_s), pp(t.truly_idle_s),
                                 pp(g.flagged_s()), pp(std::max({e_active, e_held, e_idle})));
        }
        std::set<std::string> names;
        for (const auto& [who, s] : o.truth_identity_s) {
            names.insert(who);
        }
        for (const auto& [who, s] : o.figures.identity_s) {
            names.insert(who);
        }
        double card_s = 0;
        for (const auto& [uuid, t] : o.truth) {
            card_s += t.recorded_s;
        }
        for (const std::string& who : names) {
            const double gua_s =
                o.figures.identity_s.contains(who) ? o.figures.identity_s.at(who) : 0.0;
            const double truth_s =
                o.truth_identity_s.contains(who) ? o.truth_identity_s.at(who) : 0.0;
            double allowed = 0;
            const auto used = o.identity_cards.find(who);
            for (const auto& [uuid, a] : allowance) {
                if (used == o.identity_cards.end() || used->second.contains(uuid)) {
                    allowed += a;
                }
            }
            EXPECT_LE(std::abs(gua_s - truth_s), allowed)
                << name << ": identity " << who << " gua " << gua_s << " s, truth " << truth_s
                << " s (allowed " << allowed << " s)";
            lines +=
                fmt::format("  {} identity {}: {:.1f} s gua, {:.1f} s truth ({:+.1f} % of card "
                            "time)\n",
                            name, who, gua_s, truth_s, 100.0 * (gua_s - truth_s) / card_s);
        }
        double identities = 0;
        for (const auto& [who, s] : o.figures.identity_s) {
            identities += s;
        }
        EXPECT_NEAR(identities, o.figures.headline_attributable_s, 1e-6 * std::max(1.0, identities))
            << "identity GPU-hours add up to the card-hours (active + idle-held)";
        std::cout << "[truth] " << name
                  << (o.real_s > 0 ? fmt::format(" (ran {:.2f} s real)", o.real_s) : "") << "\n"
                  << lines << std::flush;
        return lines;
    }

    std::vector<std::unique_ptr<test::BackgroundProcess>> m_sleepers;
};

} // namespace gua::e2e
