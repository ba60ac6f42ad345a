// SPDX-License-Identifier: Apache-2.0
// The report window as `gua report` takes it (--since, --until, --from, --to), shared with the
// daemon's /report pages so that both accept and refuse exactly the same values.
#pragma once

#include "core/time.hpp"
#include "report/build.hpp"

#include <string>
#include <string_view>

namespace gua::report {

/// The window's flags as given; empty means not given.
struct WindowArgs {
    std::string since = "7d"; ///< length back from `until`/now, e.g. 30m, 7d, 2w
    std::string until;        ///< end this long ago
    std::string from;         ///< absolute start (ISO 8601); replaces `since`
    std::string to;           ///< absolute end (ISO 8601; default now); replaces `until`
};

/// Sets options.from, options.to and options.window_label from `args` at `now`. Throws Fatal
/// (usage) naming the flag as `prefix` + name ("--since" on the command line, "since" in a
/// query) for a value that does not parse, and for an empty window.
void resolve_window(const WindowArgs& args, TimeUs now, BuildOptions& options,
                    std::string_view prefix);

} // namespace gua::report
