// SPDX-License-Identifier: Apache-2.0
// The holders table of `gua now` and `gua top`: as a list or (top's t) as a process tree, with
// top's host CPU % and RSS columns and its selected row.
#pragma once

#include "live/model.hpp"
#include "live/render.hpp"

#include <string>

namespace gua::live {

/// Appends the holders table of `m` to `out`.
void render_holders(std::string& out, const NowModel& m, const NowTextOptions& o);

/// Host CPU % as shown: "97%", "-" when unknown.
std::string format_cpu(std::optional<double> pct);

/// Resident memory as shown: "512M" below 10 GiB, else "12.3G"; "-" when unknown.
std::string format_rss(std::optional<std::int64_t> kib);

} // namespace gua::live
