// SPDX-License-Identifier: Apache-2.0
// The holders' command lines for `gua now` and `gua top`, read from /proc at display time.
#pragma once

#include "live/model.hpp"

#include <string>

namespace gua::live {

/// Sets each holder's command_line from <proc_root>/<pid>/cmdline (identity::display_cmdline),
/// but only while <proc_root>/<pid>/stat still shows the holder's start time: a pid that exited or
/// was reused gets none, and so does a holder whose start time is unknown.
void fill_command_lines(NowModel& model, const std::string& proc_root = "/proc");

} // namespace gua::live
