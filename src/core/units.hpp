// SPDX-License-Identifier: Apache-2.0
// Sizes as gua prints them, in one unit system: IEC binary units (B, KiB, MiB, GiB, TiB; powers
// of 1024) in status, db stats, doctor, reports and logs alike.
#pragma once

#include <cstdint>
#include <string>

namespace gua {

/// `bytes` in the largest IEC unit that keeps the value at least 1, one decimal: "512 B",
/// "48.0 KiB", "1.2 MiB", "3.4 GiB", "2.0 TiB" (a value that rounds to 1024.0 takes the next unit).
std::string format_bytes(std::uint64_t bytes);

/// GPU memory given in MiB, as GiB with one decimal whatever its size ("79.6 GiB", "0.5 GiB"), so
/// that the memory of processes and cards compares at a glance.
std::string format_gib(double mib);

/// Hours (GPU-hours, card-hours) as every report and recommendation prints them, without the unit:
/// whole from 1000 ("1234"), two decimals from 0.1 and for 0 ("12.50", "0.00"), four below
/// ("0.0033").
std::string format_hours(double hours);

} // namespace gua
