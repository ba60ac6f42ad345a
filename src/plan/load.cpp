// SPDX-License-Identifier: Apache-2.0
// load_demand: the raw card-ticks of a window through the store's block scanner, with the
// process rows that store::Reader::scan leaves out (the plan's units are processes, not
// identities).
#include "plan/load.hpp"

#include "core/fatal.hpp"
#include "plan/demand.hpp"
#include "store/allocations.hpp"
#include "store/raw.hpp"
#include "store/reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace gua::plan {

namespace {

constexpr std::int64_t k_chunk_hours = 7 * 24;

std::optional<std::int64_t> gpu_named(const std::vector<store::GpuRow>& gpus,
                                      const std::string& name) {
    std::vector<std::int64_t> prefixed;
    for (const store::GpuRow& g : gpus) {
        if (std::to_string(g.index) == name || g.uuid == name) {
            return g.id;
        }
        if (g.uuid.starts_with(name)) {
            prefixed.push_back(g.id);
        }
    }
    if (prefixed.size() == 1) {
        return prefixed.front();
    }
    throw Fatal(fmt::format("--gpu {}: {} GPU in the database", name,
                            prefixed.empty() ? "no such" : "more than one matching"),
                ExitCode::usage);
}

DemandContext context_of(store::Database& db, store::Reader& reader,
                         const std::vector<store::GpuRow>& gpus, const LoadOptions& o,
                         std::set<std::uint32_t>& user_ids) {
    DemandContext c;
    c.thresholds = o.thresholds;
    for (const store::GpuRow& g : gpus) {
        const auto i = static_cast<std::size_t>(std::max<std::int64_t>(g.id, 0));
        c.cards.resize(std::max(c.cards.size(), i + 1));
        c.cards[i].model = g.name.empty() ? "unknown" : g.name;
        c.cards[i].memory_mib = g.memory_total_mib.value_or(0);
    }
    for (const store::IdentityRow& r : reader.identities()) {
        const auto i = static_cast<std::size_t>(std::max<std::int64_t>(r.id, 0));
        c.identity_label.resize(std::max(c.identity_label.size(), i + 1), "unknown");
        c.identity_interactive.resize(c.identity_label.size(), 0);
        const telemetry::Identity& id = r.identity;
        c.identity_label[i] = id.user;
        c.identity_interactive[i] = is_interactive(id, "") ? 1 : 0;
        if (o.user && id.user == *o.user) {
            user_ids.insert(static_cast<std::uint32_t>(r.id));
        }
    }
    {
        store::ReadTransaction tx(db);
        store::Statement st = db.prepare("SELECT id, command FROM process");
        while (st.step()) {
            const auto i = static_cast<std::size_t>(std::max<std::int64_t>(st.int64(0), 0));
            c.process_command.resize(std::max(c.process_command.size(), i + 1));
            c.process_command[i] = st.text(1);
        }
    }
    for (const audit::AllocationRow& a : reader.allocations(o.from, o.to)) {
        c.allocation_label.push_back(a.kind + " " + a.id);
    }
    if (o.user && user_ids.empty()) {
        throw Fatal(fmt::format("--user {}: no such user in the database", *o.user),
                    ExitCode::usage);
    }
    return c;
}

bool has_user(const audit::CardTick& t, const std::set<std::uint32_t>& ids) {
    return std::any_of(t.processes.begin(), t.processes.end(),
                       [&](const audit::ProcTick& p) { return ids.contains(p.identity); });
}

} // namespace

Demand load_demand(store::Database& db, const LoadOptions& o) {
    store::Reader reader(db);
    const std::vector<store::GpuRow> gpus = reader.gpus();
    const std::optional<std::int64_t> only_gpu = o.gpu ? gpu_named(gpus, *o.gpu) : std::nullopt;
    std::set<std::uint32_t> user_ids;
    DemandBuilder builder(context_of(db, reader, gpus, o, user_ids));
    std::vector<std::string> hosts;
    for (const store::RunRow& r : reader.runs()) {
        const auto i = static_cast<std::size_t>(std::max<std::int64_t>(r.id, 0));
        hosts.resize(std::max(hosts.size(), i + 1));
        hosts[i] = r.host;
    }
    const auto raw = reader.span();
    const TimeUs window_from = std::clamp(o.from, store::k_time_min, store::k_time_max);
    const TimeUs window_to = std::clamp(o.to, store::k_time_min, store::k_time_max);
    TimeUs from = window_from;
    TimeUs to = window_to;
    if (raw) {
        from = std::max(from, store::hour_of(raw->first) * k_us_per_hour);
        to = std::min(to, raw->second + 1);
    }
    const store::WindowAllocations window = [&] {
        store::ReadTransaction tx(db);
        return store::read_allocations(db, window_from, window_to);
    }();
    store::AllocationShares shares(window);
    // The demand needs two per-card fields: idle power and GPM SM-active.
    store::BlockScanner scanner(db, store::card_field_set({telemetry::CardField::power_mw,
                                                           telemetry::CardField::sm_active_cpct}));
    store::ProcessIdentities identities(db);
    audit::CardTick tick;
    std::vector<std::int64_t> ids;
    while (raw && from < to) {
        const TimeUs end = std::min(to, (store::hour_of(from) + k_chunk_hours) * k_us_per_hour);
        store::ReadTransaction tx(db);
        scanner.scan(from, end, [&](const store::DecodedTicks& d) {
            for (const store::StoredCardTick& t : d.ticks) {
                if (only_gpu && t.gpu_id != *only_gpu) {
                    continue;
                }
                store::to_audit(d, t, identities, tick);
                if (!user_ids.empty() && !has_user(tick, user_ids)) {
                    continue;
                }
                shares.fill(tick);
                ids.clear();
                for (std::uint32_t i = 0; i < t.proc_count; ++i) {
                    ids.push_back(d.procs[t.proc_begin + i].process_id);
                }
                auto& cards = builder.context().cards;
                const auto g = static_cast<std::size_t>(std::max<std::int64_t>(t.gpu_id, 0));
                cards.resize(std::max(cards.size(), g + 1));
                const auto run = static_cast<std::size_t>(std::max<std::int64_t>(t.run_id, 0));
                if (cards[g].host.empty() && run < hosts.size()) {
                    cards[g].host = hosts[run];
                }
                builder.add(tick, ids);
            }
        });
        from = end;
    }
    return builder.finish(o.from, o.to, o.raw_retention_us);
}

} // namespace gua::plan
