// Time zone resolution through the system tz database.
#include "core/timezone.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>

namespace gua {

Result<TimeZone> TimeZone::load(const std::string& name) {
    TimeZone tz;
    if (name.empty() || name == "UTC" || name == "utc" || name == "Z") {
        return tz;
    }
    if (name == "local") {
        unsetenv("TZ");
        tzset();
        tz.m_utc = false;
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
    setenv("TZ", name.c_str(), 1);
    tzset();
    tz.m_utc = false;
    tz.m_name = name;
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
        localtime_r(&secs, &tm);
    }
    return {tm.tm_wday, tm.tm_hour};
}

} // namespace gua
