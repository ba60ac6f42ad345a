// SPDX-License-Identifier: Apache-2.0
// §9's driver-fault findings: the Xid events of a card in the window, one finding per code, with
// the catalog's meaning, whose fault it is, what to do, and who was on the card. Pure.
#pragma once

#include "audit/health_findings.hpp"
#include "telemetry/fault_event.hpp"

#include <string>
#include <vector>

namespace gua::audit {

/// The finding id of an Xid's class: "xid-application", "xid-hardware", "xid-driver",
/// "xid-interconnect", "xid-informational" or "xid-unknown".
std::string fault_finding_id(int xid);

/// One finding per Xid code among `events` (those of card `gpu`, oldest first): how many, when,
/// the catalog's text and the holders named on the card at each event. The share is 0 (a fault
/// is an event, not a share of time). Nothing is said about when a fault ended: gua does not know.
void add_fault_findings(int gpu, const std::vector<telemetry::FaultEvent>& events,
                        std::vector<HealthFinding>& out);

} // namespace gua::audit
