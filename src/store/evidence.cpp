// SPDX-License-Identifier: Apache-2.0
// Field table of the evidence BLOB: each member has an explicit number that is part of the file
// format; a number is never reused or renumbered, new members get new numbers.
#include "store/evidence.hpp"

#include "store/evidence_format.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

namespace gua::store {

namespace {

using evidence_format::Field;

constexpr std::size_t k_field_count = 126;

/// The field table being filled, in ascending number order: each call gives the number of its
/// first member, the members after it take the numbers that follow.
class FieldTable {
  public:
    template <class... T> FieldTable& add(std::uint8_t number, T&... members) {
        (put(number++, members), ...);
        return *this;
    }
    /// Members [first, first + count) of `array` (all of them by default).
    template <class T, std::size_t N>
    FieldTable& add_each(std::uint8_t number, std::array<T, N>& array, std::size_t first = 0,
                         std::size_t count = N) {
        for (std::size_t i = first; i < first + count; ++i) {
            put(number++, array[i]);
        }
        return *this;
    }
    /// The table; throws std::logic_error unless every field was added.
    const std::array<Field, k_field_count>& fields() const {
        if (m_size != k_field_count) {
            throw std::logic_error("evidence field table: a member is missing");
        }
        return m_fields;
    }

  private:
    /// Throws std::logic_error past k_field_count or out of ascending order.
    template <class T> void put(std::uint8_t number, T& member) {
        if (m_size == k_field_count || (m_size > 0 && number <= m_fields[m_size - 1].number)) {
            throw std::logic_error("evidence field table: numbers out of order");
        }
        m_fields[m_size++] = Field{number, &member};
    }

    std::array<Field, k_field_count> m_fields{};
    std::size_t m_size = 0;
};

/// Schema 17: the interconnect and bus totals (audit/health_fabric.hpp), numbers 94–125.
void add_fabric_fields(FieldTable& f, audit::FabricTotals& x) {
    f.add_each(94, x.nvlink_known_us);
    f.add_each(97, x.nvlink_errors);
    f.add(100, x.nvlink_errors_seen.first_us, x.nvlink_errors_seen.last_end_us, x.links_known_us,
          x.links_down_us, x.links, x.links_active_min, x.links_down_seen.first_us,
          x.links_down_seen.last_end_us);
    f.add(108, x.pcie_known_active_us, x.pcie_degraded_active_us, x.pcie_gen_max, x.pcie_width_max,
          x.pcie_gen_low, x.pcie_width_low, x.pcie_degraded_seen.first_us,
          x.pcie_degraded_seen.last_end_us);
    f.add(116, x.pcie_replay_known_us, x.pcie_replays, x.pcie_replay_read_us, x.pcie_replay_first,
          x.pcie_replay_first_us, x.pcie_replay_last);
    f.add(122, x.remap_known_us, x.remap_failed_us, x.remap_failed_seen.first_us,
          x.remap_failed_seen.last_end_us);
}

std::array<Field, k_field_count> fields_of(audit::GpuTotals& t) {
    audit::PoolTimes& pools = t.pools;
    audit::CardProfile& p = t.profile;
    audit::Provenance& v = t.provenance;
    audit::EnergyTotals& e = t.health.energy;
    audit::ThrottleTotals& th = t.health.throttle;
    audit::MemoryTotals& mem = t.health.memory;
    audit::GpmTotals& gpm = t.health.gpm;
    FieldTable f;
    f.add_each(0, pools, 0, 8);
    f.add(8, p.office_us, p.off_hours_us, p.steady_us, p.bursty_us, p.steady_under_us,
          p.steady_compute_bound_us);
    f.add_each(14, p.bursty_bucket_us);
    f.add(18, p.bursty_util_us, p.steady_under_util_us, p.steady_compute_bound_util_us,
          p.active_held_mib_us, p.steady_under_held_mib_us, p.idle_held_mib_us);
    // Schema 4: measurement provenance (card-time by telemetry::UtilSource, then unknowns).
    f.add_each(24, v.by_source_us);
    f.add(28, v.util_unknown_us, v.holders_unknown_us, v.no_reading_us, t.overlap_us);
    // Health: energy by source (mJ, and the card time each covers) and by state.
    f.add(32, e.counter_mj, e.counter_us, e.power_mj, e.power_us);
    f.add_each(36, e.state_mj, 0, 4);
    // Health: active time with clocks-event reasons read, by reason; SM clock sums.
    f.add(40, th.events_active_us);
    f.add_each(41, th.reason_active_us);
    f.add(47, th.clock_active_us, th.clock_mhz_ms, th.max_clock_mhz_ms);
    // Health: memory pressure and ghost memory.
    f.add(50, mem.known_us, mem.pressure_us, mem.ghost_known_us, mem.ghost_mib_ms,
          mem.ghost_first_us, mem.ghost_last_end_us);
    // Health: active time by load bin (power / power limit in 5 % steps).
    f.add_each(56, t.health.load);
    // Health: GPM metrics over active time (time read and Σ reading × time, per metric in
    // audit::GpmMetric order), then the light time by SM active.
    f.add_each(76, gpm.active_us);
    f.add_each(83, gpm.cpct_ms);
    f.add(90, gpm.light_active_us, pools[8]);
    // Schema 13: idle time not held while the allocation was unknown.
    f.add(92, v.allocation_unknown_us);
    // Energy of allocated-unused time (counted as unmeasured before; 0 in older rows).
    f.add(93, e.state_mj[4]);
    add_fabric_fields(f, t.health.fabric);
    return f.fields();
}

static_assert(audit::k_pool_count == 9 && audit::k_bucket_count == 4 &&
                  audit::k_throttle_reason_count == 6 && audit::k_load_bins == 20 &&
                  audit::k_gpm_metric_count == 7,
              "a new member needs a new field number");

/// The identity evidence: its health totals.
constexpr std::size_t k_identity_field_count = 2 + audit::k_load_bins;

std::array<Field, k_identity_field_count> identity_fields_of(audit::IdentityHealth& h) {
    std::array<Field, k_identity_field_count> f;
    f[0] = Field{0, &h.energy_mj};
    f[1] = Field{1, &h.energy_us};
    for (std::size_t b = 0; b < audit::k_load_bins; ++b) { // numbers 2–21: load bins
        f[2 + b] = Field{static_cast<std::uint8_t>(2 + b), &h.load[b]};
    }
    return f;
}

} // namespace

std::string encode_evidence(const audit::GpuTotals& totals) {
    audit::GpuTotals copy = totals;
    return evidence_format::encode(fields_of(copy));
}

void decode_evidence(std::string_view blob, audit::GpuTotals& totals) {
    totals.pools = audit::PoolTimes{};
    totals.profile = audit::CardProfile{};
    totals.provenance = audit::Provenance{};
    totals.overlap_us = 0;
    totals.health = audit::HealthTotals{};
    evidence_format::decode(blob, fields_of(totals));
}

std::string encode_identity_evidence(const audit::IdentityTotals& totals) {
    audit::IdentityHealth copy = totals.health;
    return evidence_format::encode(identity_fields_of(copy));
}

void decode_identity_evidence(std::string_view blob, audit::IdentityTotals& totals) {
    totals.health = audit::IdentityHealth{};
    evidence_format::decode(blob, identity_fields_of(totals.health));
}

std::vector<int> evidence_differences(std::string_view blob, const audit::GpuTotals& recomputed) {
    audit::GpuTotals stored;
    decode_evidence(blob, stored);
    audit::GpuTotals fresh = recomputed;
    std::array<std::int64_t, audit::k_energy_state_count>& fresh_mj = fresh.health.energy.state_mj;
    if (stored.health.energy.state_mj[4] == 0) { // written before field 93: in unmeasured
        fresh_mj[3] += std::exchange(fresh_mj[4], 0);
    }
    const std::array<Field, k_field_count> s = fields_of(stored);
    const std::array<Field, k_field_count> f = fields_of(fresh);
    std::vector<int> differ;
    for (std::size_t k = 0; k < k_field_count; ++k) {
        const bool same = std::visit(
            [&](auto* stored_value) {
                using T = std::remove_pointer_t<decltype(stored_value)>;
                const T fresh_value = *std::get<T*>(f[k].value);
                if (*stored_value == T{} || *stored_value == fresh_value) {
                    return true;
                }
                if constexpr (std::is_floating_point_v<T>) {
                    // Sums of the same ticks in another order may differ in the last bits.
                    const double scale = std::max(std::fabs(*stored_value), std::fabs(fresh_value));
                    return std::fabs(*stored_value - fresh_value) <= 1e-9 * scale;
                }
                return false;
            },
            s[k].value);
        if (!same) {
            differ.push_back(s[k].number);
        }
    }
    return differ;
}

std::string recode_evidence(std::string_view blob) {
    audit::GpuTotals totals;
    decode_evidence(blob, totals);
    return encode_evidence(totals);
}

std::string recode_identity_evidence(std::string_view blob) {
    audit::IdentityTotals totals;
    decode_identity_evidence(blob, totals);
    return encode_identity_evidence(totals);
}

} // namespace gua::store
