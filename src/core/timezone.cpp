// SPDX-License-Identifier: Apache-2.0
// Time zone resolution through the system tz database, read once per zone (never through TZ).
#include "core/timezone.hpp"

#include "core/tz_rules.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

namespace gua {

namespace {

constexpr const char* k_zoneinfo = "/usr/share/zoneinfo/";

/// The user's $TZ when first asked (at start-up: nothing in gua changes it): "" when unset or
/// empty; a leading ':' (POSIX's implementation-defined form) is dropped.
const std::string& user_tz() {
    static const std::string tz = [] {
        const char* value = std::getenv("TZ");
        const std::string text = value != nullptr ? value : "";
        return !text.empty() && text.front() == ':' ? text.substr(1) : text;
    }();
    return tz;
}

/// True for a name that can only mean a file under /usr/share/zoneinfo.
bool plausible_zone_name(const std::string& name) {
    return !name.empty() && name.find("..") == std::string::npos && name.front() != '/';
}

/// The rules "local" means: $TZ as a file, an IANA name or a POSIX rule, else /etc/localtime;
/// UTC (nullptr) where none of them can be read, as the C library does.
std::shared_ptr<const ZoneRules> local_rules() {
    const std::string& tz = user_tz();
    std::string path = "/etc/localtime";
    if (!tz.empty()) {
        std::error_code ec;
        path = tz.front() == '/' ? tz : k_zoneinfo + tz;
        if (tz.front() != '/' &&
            (!plausible_zone_name(tz) || !std::filesystem::is_regular_file(path, ec))) {
            Result<PosixZone> rule = parse_posix_zone(tz);
            return rule ? std::make_shared<const ZoneRules>(rules_of(std::move(rule).value()))
                        : nullptr;
        }
    }
    Result<ZoneRules> rules = load_tzif(path);
    return rules ? std::make_shared<const ZoneRules>(std::move(rules).value()) : nullptr;
}

std::int64_t floor_seconds(std::int64_t a, std::int64_t b) {
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}

} // namespace

Result<TimeZone> TimeZone::load(const std::string& name) {
    TimeZone tz;
    if (name.empty() || name == "UTC" || name == "utc" || name == "Z") {
        return tz;
    }
    if (name == "local") {
        tz.m_rules = local_rules();
        tz.m_name = fmt::format("local, {}", tz.m_rules ? tz.m_rules->std_name() : "UTC");
        return tz;
    }
    std::error_code ec;
    const std::string path = k_zoneinfo + name;
    Result<ZoneRules> rules =
        plausible_zone_name(name) && std::filesystem::is_regular_file(path, ec)
            ? load_tzif(path)
            : Result<ZoneRules>(Error{"not in the tz database"});
    if (!rules) {
        return Error{fmt::format("unknown time zone '{}' (use UTC, local, or an IANA name such "
                                 "as Europe/Berlin)",
                                 name)};
    }
    tz.m_rules = std::make_shared<const ZoneRules>(std::move(rules).value());
    tz.m_name = name;
    return tz;
}

std::pair<int, int> TimeZone::weekday_hour(TimeUs t) const {
    std::int64_t secs = floor_seconds(t, k_us_per_second);
    if (m_rules) {
        secs += m_rules->utoff_at(secs);
    }
    const std::int64_t days = floor_seconds(secs, 86400);
    const auto weekday = static_cast<int>(((days + 4) % 7 + 7) % 7); // 1970-01-01: Thursday
    const auto hour = static_cast<int>((secs - days * 86400) / 3600);
    return {weekday, hour};
}

} // namespace gua
