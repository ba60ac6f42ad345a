// SPDX-License-Identifier: Apache-2.0
// Time zone resolution through the system tz database; TZ switched under one lock.
#include "core/timezone.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <optional>

namespace gua {

namespace {

/// The user's $TZ: "" when unset or empty; a leading ':' (POSIX's implementation-defined form)
/// is dropped.
std::string user_tz_at_start() {
    const char* tz = std::getenv("TZ");
    const std::string text = tz != nullptr ? tz : "";
    return !text.empty() && text.front() == ':' ? text.substr(1) : text;
}

/// The process's TZ as this file last set it (nullopt: never set here), behind its lock. TZ is
/// process state whatever we do; this is the one place that changes it.
struct ZoneState {
    std::mutex mutex;
    std::optional<std::string> applied; ///< "" for the local zone (TZ unset)
    /// The user's $TZ when the zones were first used (before this file changed it): what "local"
    /// means, as for date(1); "" means /etc/localtime.
    std::string user_tz = user_tz_at_start();
};

ZoneState& zone_state() {
    static ZoneState state;
    return state;
}

/// Makes `tz` ("" = local) the zone of localtime_r; the caller holds the lock.
void apply_zone(ZoneState& state, const std::string& tz) {
    if (state.applied == tz) {
        return;
    }
    if (tz.empty()) {
        unsetenv("TZ");
    } else {
        setenv("TZ", tz.c_str(), 1);
    }
    tzset();
    state.applied = tz;
}

} // namespace

Result<TimeZone> TimeZone::load(const std::string& name) {
    TimeZone tz;
    if (name.empty() || name == "UTC" || name == "utc" || name == "Z") {
        return tz;
    }
    if (name == "local") {
        ZoneState& state = zone_state();
        const std::lock_guard lock(state.mutex);
        apply_zone(state, state.user_tz);
        tz.m_utc = false;
        tz.m_tz = state.user_tz;
        tz.m_name = "local";
        if (const char* zone = tzname[0]; zone != nullptr) {
            tz.m_name = fmt::format("local, {}", zone);
        }
        return tz;
    }
    const bool plausible = name.find("..") == std::string::npos && name.front() != '/';
    std::error_code ec;
    if (!plausible || !std::filesystem::is_regular_file("/usr/share/zoneinfo/" + name, ec)) {
        return Error{fmt::format("unknown time zone '{}' (use UTC, local, or an IANA name such "
                                 "as Europe/Berlin)",
                                 name)};
    }
    tz.m_utc = false;
    tz.m_name = name;
    tz.m_tz = name;
    return tz;
}

std::pair<int, int> TimeZone::weekday_hour(TimeUs t) const {
    std::time_t secs = static_cast<std::time_t>(t / k_us_per_second);
    if (t < 0 && t % k_us_per_second != 0) {
        --secs;
    }
    std::tm tm{};
    if (m_utc) {
        gmtime_r(&secs, &tm);
    } else {
        ZoneState& state = zone_state();
        const std::lock_guard lock(state.mutex);
        apply_zone(state, m_tz);
        localtime_r(&secs, &tm);
    }
    return {tm.tm_wday, tm.tm_hour};
}

} // namespace gua
