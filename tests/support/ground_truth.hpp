// SPDX-License-Identifier: Apache-2.0
// Ground truth of a fake-driver scenario: the exact active / idle-held / truly-idle seconds of a
// card and each identity's GPU-seconds over given spans, integrated from the scenario's
// piecewise-constant series. Independent of gua: only the scenario JSON and the measurement rules.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace gua::test {

/// A piecewise-constant function of scenario time: [[t0, v0], [t1, v1], …] (before t0: v0).
class Series {
  public:
    /// `points` as in the fake's scenario format; an absent series is `fallback` everywhere.
    explicit Series(const nlohmann::json& points = nlohmann::json(), double fallback = 0);
    /// The value at `t`.
    double at(double t) const;
    /// Appends the times in (a, b) where the value may change.
    void breaks(double a, double b, std::vector<double>& out) const;
    /// The integral over [a, b): value × time, piece by piece.
    double integral(double a, double b) const;

  private:
    std::vector<std::pair<double, double>> m_points;
    double m_fallback = 0;
};

/// A card of the scenario: a physical device (mig_slot -1) or one of its MIG instances.
struct TruthCard {
    std::string uuid;
    int device = 0;
    int mig_slot = -1;
    bool measurable = true; ///< false for MIG: the driver has no utilization for it
};

/// A half-open span [from_s, to_s) of scenario seconds (one recorded card-tick).
struct Span {
    double from_s = 0;
    double to_s = 0;
};

/// Exact seconds of one card over some spans.
struct CardTruth {
    double recorded_s = 0;
    double active_s = 0;
    double idle_held_s = 0;
    double truly_idle_s = 0;
    /// Per identity label: its part of active + idle-held seconds (no process: "(no process)").
    std::map<std::string, double> identity_s;
};

/// The classification rules (gua's defaults, docs/configuration.md).
struct TruthRules {
    double active_util_pct = 10;
    double held_mib = 100;
};

/// A scenario in the fake driver's JSON format (tests/fake_nvml/README.md) whose processes may
/// carry a `who` label (their identity in the report); `who` is not part of the fake's format.
class GroundTruth {
  public:
    /// Reads devices, MIG instances and processes of `scenario`; default uuids as the fake's.
    GroundTruth(const nlohmann::json& scenario, TruthRules rules = {});
    /// The cards the fake driver exposes (MIG instances instead of their parent).
    const std::vector<TruthCard>& cards() const { return m_cards; }
    /// The card with `uuid`; throws std::out_of_range when the scenario has none.
    const TruthCard& card(const std::string& uuid) const;
    /// Integrates card `uuid` over `spans`: at each instant the card is active when its `util`
    /// is at or above the threshold; else idle-held when its listed compute/MPS processes hold
    /// more than held_mib; else truly idle. Active time is split among the listed processes by
    /// SM share (by memory when none has SM activity), idle-held time by held memory.
    CardTruth integrate(const std::string& uuid, const std::vector<Span>& spans) const;

  private:
    struct Proc {
        int device = 0;
        int mig_slot = -1;
        std::string who;
        bool holder = true; ///< compute or MPS (graphics processes hold nothing by default)
        double start = 0;
        double end = 0;
        Series memory_mib;
        Series sm_util;
    };
    void add_instant(const TruthCard& card, double t, double dt, CardTruth& out) const;

    TruthRules m_rules;
    std::vector<TruthCard> m_cards;
    std::vector<Series> m_util; // per device
    std::vector<Proc> m_procs;
};

/// The scenario as the fake driver reads it: `who` labels removed.
nlohmann::json fake_scenario(nlohmann::json scenario);

} // namespace gua::test
