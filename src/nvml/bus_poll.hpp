// SPDX-License-Identifier: Apache-2.0
// The per-poll PCIe link and NVLink link readings of a card (docs/health.md): the current PCIe
// generation and width every poll, kept from the latest poll that found the card busy; the PCIe
// maxima and the NVLink link states, one call per link, at most every k_bus_hold_us and held in
// between.
#pragma once

#include "core/time.hpp"
#include "nvml/card.hpp"
#include "nvml/library.hpp"
#include "telemetry/card_fields.hpp"

namespace gua::nvml {

/// How long the NVLink link states and the PCIe maxima are held between reads: reading a link's
/// state is one driver call per link (up to 18), too many for every poll.
inline constexpr DurationUs k_bus_hold_us = 30 * k_us_per_second;

/// Fills the PCIe and NVLink link readings of physical card `card` polled at `now`; a reading
/// the driver does not give stays nullopt ("n/a"). The current PCIe generation and width are the
/// ones read at the latest poll whose newest utilization sample was above 0 (`busy`): an idle
/// card's driver lowers the link to save power, so an idle reading says nothing of the link's
/// health and, stored every tick, would change with every idle and busy phase. Until the card has
/// been busy once they are the latest reading.
void read_bus(const Library& lib, Card& card, TimeUs now, bool busy, telemetry::CardReadings& r);

} // namespace gua::nvml
