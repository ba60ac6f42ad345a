// SPDX-License-Identifier: Apache-2.0
// §9's interconnect and bus figures of one card (NVLink, PCIe, row remapping) in the JSON and
// text reports; nothing at all for a card whose driver gave none of these readings.
#pragma once

#include "audit/health_fabric.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace gua::report {

/// Whether any interconnect or bus reading of the card was recorded in the window.
bool fabric_read(const audit::FabricTotals& t);

/// The card's `fabric` object (docs/report-json.md): each part null where never read.
nlohmann::json fabric_json(const audit::FabricTotals& t);

/// One text line for card `gpu` ("n/a" for each reading never given), ending in a newline.
std::string fabric_text_line(int gpu, const audit::FabricTotals& t);

} // namespace gua::report
