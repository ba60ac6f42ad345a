// SPDX-License-Identifier: Apache-2.0
// Each card's newest Xid (see last_xid.hpp).
#include "live/last_xid.hpp"

#include "faults/catalog.hpp"
#include "store/db_error.hpp"
#include "store/faults.hpp"

#include <limits>

namespace gua::live {

namespace {

/// The process to name: the kernel log's pid (with its user when the daemon saw it on the card),
/// else the card's only process at the fault's time; none when several were on it.
void name_process(LastXid& x, const telemetry::FaultEvent& e) {
    const telemetry::FaultHolder* holder = nullptr;
    for (const telemetry::FaultHolder& h : e.holders) {
        if (e.pid && h.pid == *e.pid) {
            holder = &h;
        }
    }
    if (!e.pid && e.holders.size() == 1) {
        holder = &e.holders.front();
    }
    x.pid = e.pid ? e.pid : (holder ? std::optional(holder->pid) : std::nullopt);
    x.command = !e.process_name.empty() ? e.process_name : (holder ? holder->process_name : "");
    if (holder && holder->identity) {
        x.user = holder->identity->user;
        if (x.command.empty()) {
            x.command = holder->identity->command;
        }
    }
}

LastXid last_xid_of(const telemetry::FaultEvent& e) {
    const faults::XidInfo info = faults::xid_info(e.xid);
    LastXid x;
    x.code = e.xid;
    x.at = e.at_us;
    x.mnemonic = std::string(info.mnemonic);
    x.meaning = std::string(info.meaning);
    x.whose = std::string(faults::to_string(info.whose));
    name_process(x, e);
    return x;
}

bool on_card(const telemetry::FaultEvent& e, const GpuNow& g) {
    return !e.uuid.empty() && (e.uuid == g.uuid || e.uuid == g.parent_uuid);
}

} // namespace

std::vector<telemetry::FaultEvent> faults_since(store::Database& db, TimeUs from) {
    try {
        return store::read_faults(db, from, std::numeric_limits<TimeUs>::max());
    } catch (const store::DbError&) {
        return {}; // a busy or damaged fault table: the view goes on without the faults
    }
}

void attach_last_xids(NowModel& m, const std::vector<telemetry::FaultEvent>& events,
                      DurationUs window_us) {
    m.xid_window_us = window_us;
    for (GpuNow& g : m.gpus) {
        g.last_xid.reset();
        for (const telemetry::FaultEvent& e : events) { // oldest first: the last match is newest
            if (e.xid != faults::k_gpu_missing_code && on_card(e, g) &&
                e.at_us >= m.now - window_us && e.at_us <= m.now) {
                g.last_xid = last_xid_of(e);
            }
        }
    }
}

} // namespace gua::live
