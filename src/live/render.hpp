// SPDX-License-Identifier: Apache-2.0
// Renderers of the live view: the `gua now` table, its JSON, and `gua top`'s frame.
#pragma once

#include "live/model.hpp"
#include "live/view.hpp"

#include <cstddef>
#include <string>

namespace gua::live {

/// Text rendering options.
struct NowTextOptions {
    bool color = false;            ///< ANSI colours (terminals only, never with NO_COLOR)
    int bar_width = 20;            ///< cells of the per-GPU three-state bar
    std::size_t max_decisions = 8; ///< policy decisions listed
    int columns = 0;               ///< terminal width: every line is cut to it (0: no limit)
    bool history = false;          ///< a history line (GpuNow::recent_states) under each GPU
};

/// Cells of the history line for a terminal `columns` wide (0: not a terminal): the width after
/// its indent, or 60.
int history_cells(int columns);

/// `line` cut to `columns` terminal columns (one per code point; ANSI escape sequences take none),
/// ending in "…" when cut, with colours reset after a cut inside them. Unchanged when it fits or
/// `columns` is 0.
std::string clip_to_columns(const std::string& line, int columns);

/// The `gua now` table: source line, GPUs with their three-state bar, holders, policy decisions.
std::string render_now_text(const NowModel& model, const NowTextOptions& options);

/// Slices of the history window in `gua now --format json` (recent_states).
inline constexpr int k_json_history_slices = 20;

/// The `gua now --format json` document (docs/now-json.md), pretty-printed, ending in a newline.
std::string render_now_json(const NowModel& model);

/// One `gua top` frame: a header naming the refresh interval, `view`'s sort and filter, the table
/// and the help over it when asked. With `rows` > 0 (a terminal) it fills exactly `rows` lines,
/// the last a footer with the keys or the filter prompt, cuts what does not fit (saying so) and
/// ends without a newline, so that the screen never scrolls; with `rows` 0 every line ends in a
/// newline and there is no footer. Every line is cut to options.columns.
std::string render_top_frame(const NowModel& model, const TopView& view,
                             const NowTextOptions& options, DurationUs refresh_us, int rows);

/// gua::format_gib of `mib` ("8.1 GiB"); "?" for nullopt.
std::string format_gib(std::optional<std::int64_t> mib);

} // namespace gua::live
