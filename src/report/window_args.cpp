// SPDX-License-Identifier: Apache-2.0
// Window flags → [from, to) and its label, with the command line's error messages.
#include "report/window_args.hpp"

#include "core/duration.hpp"
#include "core/fatal.hpp"

#include <fmt/format.h>

namespace gua::report {

namespace {

TimeUs parse_time_flag(std::string_view flag, const std::string& text) {
    Result<TimeUs> t = parse_iso8601(text);
    if (!t) {
        throw Fatal(fmt::format("{}: {}", flag, t.error().message), ExitCode::usage);
    }
    return t.value();
}

DurationUs parse_duration_flag(std::string_view flag, const std::string& text) {
    Result<DurationUs> d = parse_duration(text);
    if (!d) {
        throw Fatal(fmt::format("{}: {}", flag, d.error().message), ExitCode::usage);
    }
    return d.value();
}

} // namespace

void resolve_window(const WindowArgs& args, TimeUs now, BuildOptions& options,
                    std::string_view prefix) {
    const auto flag = [&](std::string_view name) { return fmt::format("{}{}", prefix, name); };
    if (!args.from.empty() || !args.to.empty()) {
        options.to = args.to.empty() ? now : parse_time_flag(flag("to"), args.to);
        options.from = args.from.empty()
                           ? options.to - parse_duration_flag(flag("since"), args.since)
                           : parse_time_flag(flag("from"), args.from);
        options.window_label = format_duration(options.to - options.from);
    } else {
        options.to =
            args.until.empty() ? now : now - parse_duration_flag(flag("until"), args.until);
        const DurationUs since = parse_duration_flag(flag("since"), args.since);
        options.from = now - since;
        options.window_label = args.until.empty() ? format_duration(since)
                                                  : format_duration(options.to - options.from);
    }
    if (options.from >= options.to) {
        throw Fatal(fmt::format("empty window: {} is not before {}", format_iso8601(options.from),
                                format_iso8601(options.to)),
                    ExitCode::usage);
    }
}

} // namespace gua::report
