// SPDX-License-Identifier: Apache-2.0
// DemandBuilder: raw card-ticks (with their processes' store ids) → the plan's units of demand.
#pragma once

#include "audit/card_tick.hpp"
#include "plan/model.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace gua::plan {

/// What the builder knows of one card (store gpu id).
struct CardInfo {
    std::string model = "unknown";
    std::int64_t memory_mib = 0;
    std::string host;
};

/// The dimension tables a builder reads: cards by gpu id, identities by identity id,
/// allocations by their index in the window's allocation list.
struct DemandContext {
    std::vector<CardInfo> cards;
    std::vector<std::string> identity_label;
    std::vector<char> identity_interactive;
    std::vector<std::string> allocation_label;
    std::vector<std::string> process_command; ///< by process row id (the store keeps it there)
    audit::Thresholds thresholds;
};

/// Folds card-ticks into units. A process present on a busy card-tick (active or idle-held) is
/// part of its unit for that tick: its allocation's gang when an allocation owned the card,
/// else its own (pid + start time), merged with the other processes of its identity that it
/// shares a card-tick with (a job's workers, a notebook's helpers: one session). Busy card time
/// with no listed holder becomes an unattributed unit of that card, so the units together hold
/// exactly the recorded busy cards.
class DemandBuilder {
  public:
    explicit DemandBuilder(DemandContext context) : m_context(std::move(context)) {}
    /// The tables it reads; a reader may complete them (a card's host) before the card's first
    /// card-tick.
    DemandContext& context() { return m_context; }
    /// Adds one card-tick; `process_ids[i]` is the process row of `tick.processes[i]`.
    /// Card-ticks must come in (t0, gpu) order.
    void add(const audit::CardTick& tick, const std::vector<std::int64_t>& process_ids);
    /// The demand of [from, to); the builder is left empty.
    Demand finish(TimeUs from, TimeUs to, std::optional<DurationUs> raw_retention_us);

  private:
    struct Part {
        std::uint32_t unit = 0;
        std::uint32_t identity = 0;
        bool gang = false;
        std::int64_t mib = 0;
        bool mib_unknown = false;
        double sm_pct = 0;
        bool sm_known = false;
        bool active = false;
    };
    std::uint32_t unit_for(std::int64_t key, UnitKind kind, const audit::CardTick& tick,
                           const std::string& label, bool interactive);
    std::size_t pool_of(std::int64_t gpu);
    void note_coverage(const audit::CardTick& tick, bool busy);
    void add_part(const audit::CardTick& tick, const Part& part, double compute_pct, bool gpm);
    void add_unattributed(const audit::CardTick& tick);
    void collect_parts(const audit::CardTick& tick, const std::vector<std::int64_t>& ids);
    std::uint32_t process_unit(const audit::CardTick& tick, std::size_t i, std::int64_t id);
    std::uint32_t root(std::uint32_t unit);
    void fold_merged(std::vector<Unit>& units);

    DemandContext m_context;
    Demand m_demand;
    std::unordered_map<std::int64_t, std::uint32_t> m_process_units;
    std::unordered_map<std::int64_t, std::uint32_t> m_gang_units;
    std::unordered_map<std::int64_t, std::uint32_t> m_unattributed; ///< gpu id → open unit
    std::map<std::pair<std::string, std::int64_t>, std::size_t> m_pool_index;
    std::vector<std::map<std::int64_t, std::int64_t>> m_idle_watts; ///< per pool: W → ticks
    std::map<std::int64_t, std::size_t> m_gpu_pool;                 ///< gpu id → pool
    std::vector<Part> m_parts;
    /// Units merged into another (processes of one identity met on one card-tick: one session)
    /// point to it; roots point to themselves.
    std::vector<std::uint32_t> m_parent;
};

/// Whether a process of `identity` running `command` is interactive (a Jupyter kernel by its
/// kernel id, command or systemd unit).
bool is_interactive(const telemetry::Identity& identity, const std::string& command);

/// The union of `unit`'s presences: held where any card was, active where any card was.
std::vector<Phase> union_of(const std::vector<Presence>& presences);

/// Appends [begin, end) with `active` to `phases`, extending the last phase when it ends at
/// `begin` in the same state.
void append_phase(std::vector<Phase>& phases, TimeUs begin, TimeUs end, bool active);

} // namespace gua::plan
