// SPDX-License-Identifier: Apache-2.0
// TZif files (RFC 8536) and POSIX TZ strings parsed into offset tables; civil dates by Howard
// Hinnant's days-from-civil algorithms.
#include "core/tz_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>

namespace gua {

namespace {

constexpr std::int64_t k_day_s = 86400;

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}

/// Days since 1970-01-01 of the proleptic Gregorian date y-m-d.
std::int64_t days_from_civil(std::int64_t y, int m, int d) {
    y -= m <= 2 ? 1 : 0;
    const std::int64_t era = floor_div(y, 400);
    const std::int64_t yoe = y - era * 400;
    const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/// The year of day `days` since 1970-01-01.
std::int64_t year_of_days(std::int64_t days) {
    days += 719468;
    const std::int64_t era = floor_div(days, 146097);
    const std::int64_t doe = days - era * 146097;
    const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const std::int64_t mp = (5 * doy + 2) / 153;
    return yoe + era * 400 + (mp >= 10 ? 1 : 0);
}

bool is_leap(std::int64_t y) {
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/// Day (since the epoch) on which `date` falls in year `y`.
std::int64_t day_of(const PosixZone::Date& date, std::int64_t y) {
    const std::int64_t jan1 = days_from_civil(y, 1, 1);
    switch (date.kind) {
    case PosixZone::Date::Kind::julian_no_leap:
        return jan1 + date.day - 1 + (is_leap(y) && date.day >= 60 ? 1 : 0);
    case PosixZone::Date::Kind::julian:
        return jan1 + date.day;
    case PosixZone::Date::Kind::month_week_day:
        break;
    }
    const std::int64_t first = days_from_civil(y, date.month, 1);
    const std::int64_t next_month =
        date.month == 12 ? days_from_civil(y + 1, 1, 1) : days_from_civil(y, date.month + 1, 1);
    const std::int64_t weekday = ((first + 4) % 7 + 7) % 7; // 1970-01-01 was a Thursday
    std::int64_t day = first + (date.day - weekday + 7) % 7 + 7 * (date.week - 1);
    while (day >= next_month) { // week 5: the last such weekday of the month
        day -= 7;
    }
    return day;
}

/// A cursor over a POSIX TZ string.
struct PosixText {
    std::string_view s;
    std::size_t pos = 0;

    bool at(char c) const { return pos < s.size() && s[pos] == c; }
    bool digit() const {
        return pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]));
    }
    bool take(char c) {
        if (at(c)) {
            ++pos;
            return true;
        }
        return false;
    }
    std::optional<int> number(int max) {
        if (!digit()) {
            return std::nullopt;
        }
        int n = 0;
        while (digit()) {
            n = n * 10 + (s[pos++] - '0');
            if (n > max) {
                return std::nullopt;
            }
        }
        return n;
    }
    std::optional<std::string> name() {
        const std::size_t start = pos;
        if (take('<')) {
            while (pos < s.size() && s[pos] != '>') {
                ++pos;
            }
            if (!at('>') || pos - start - 1 < 3) {
                return std::nullopt;
            }
            return std::string(s.substr(start + 1, pos++ - start - 1));
        }
        while (pos < s.size() && std::isalpha(static_cast<unsigned char>(s[pos]))) {
            ++pos;
        }
        return pos - start >= 3 ? std::optional(std::string(s.substr(start, pos - start)))
                                : std::nullopt;
    }
    /// [+-]hh[:mm[:ss]] in seconds (hours up to `max_hours`).
    std::optional<std::int64_t> duration(int max_hours) {
        const bool negative = take('-');
        if (!negative) {
            take('+');
        }
        const std::optional<int> h = number(max_hours);
        if (!h) {
            return std::nullopt;
        }
        std::int64_t total = std::int64_t{*h} * 3600;
        for (const int scale : {60, 1}) {
            if (!take(':')) {
                break;
            }
            const std::optional<int> part = number(59);
            if (!part) {
                return std::nullopt;
            }
            total += std::int64_t{*part} * scale;
        }
        return negative ? -total : total;
    }
    std::optional<PosixZone::Date> date() {
        PosixZone::Date d;
        if (take('J')) {
            const std::optional<int> n = number(365);
            if (!n || *n < 1) {
                return std::nullopt;
            }
            d.kind = PosixZone::Date::Kind::julian_no_leap;
            d.day = *n;
        } else if (take('M')) {
            const std::optional<int> m = number(12);
            const std::optional<int> w = take('.') ? number(5) : std::nullopt;
            const std::optional<int> wd = take('.') ? number(6) : std::nullopt;
            if (!m || *m < 1 || !w || *w < 1 || !wd) {
                return std::nullopt;
            }
            d = {PosixZone::Date::Kind::month_week_day, *wd, *m, *w};
        } else {
            const std::optional<int> n = number(365);
            if (!n) {
                return std::nullopt;
            }
            d.kind = PosixZone::Date::Kind::julian;
            d.day = *n;
        }
        if (take('/')) {
            const std::optional<std::int64_t> t = duration(167);
            if (!t) {
                return std::nullopt;
            }
            d.time_s = *t;
        }
        return d;
    }
};

} // namespace

Result<PosixZone> parse_posix_zone(std::string_view text) {
    const Error bad{fmt::format("malformed TZ rule '{}'", text)};
    PosixText p{text};
    PosixZone z;
    const std::optional<std::string> std_name = p.name();
    const std::optional<std::int64_t> std_offset = p.duration(24);
    if (!std_name || !std_offset) {
        return bad;
    }
    z.std_name = *std_name;
    z.std_utoff_s = -*std_offset; // POSIX offsets count west of Greenwich
    if (p.pos == text.size()) {
        return z;
    }
    z.dst_name = p.name();
    if (!z.dst_name) {
        return bad;
    }
    z.dst_utoff_s = z.std_utoff_s + 3600;
    if (!p.at(',') && p.pos < text.size()) {
        const std::optional<std::int64_t> dst_offset = p.duration(24);
        if (!dst_offset) {
            return bad;
        }
        z.dst_utoff_s = -*dst_offset;
    }
    if (p.pos == text.size()) { // no rule: the United States' since 2007, as glibc assumes
        z.start = {PosixZone::Date::Kind::month_week_day, 0, 3, 2};
        z.end = {PosixZone::Date::Kind::month_week_day, 0, 11, 1};
        return z;
    }
    const std::optional<PosixZone::Date> start = p.take(',') ? p.date() : std::nullopt;
    const std::optional<PosixZone::Date> end = p.take(',') ? p.date() : std::nullopt;
    if (!start || !end || p.pos != text.size()) {
        return bad;
    }
    z.start = *start;
    z.end = *end;
    return z;
}

std::int64_t PosixZone::utoff_at(std::int64_t t) const {
    if (!dst_name) {
        return std_utoff_s;
    }
    const std::int64_t year = year_of_days(floor_div(t + std_utoff_s, k_day_s));
    const std::int64_t begins = day_of(start, year) * k_day_s + start.time_s - std_utoff_s;
    const std::int64_t ends = day_of(end, year) * k_day_s + end.time_s - dst_utoff_s;
    const bool dst = begins < ends ? (begins <= t && t < ends) : !(ends <= t && t < begins);
    return dst ? dst_utoff_s : std_utoff_s;
}

std::int64_t ZoneRules::utoff_at(std::int64_t t) const {
    if (footer && (transitions.empty() || t >= transitions.back())) {
        return footer->utoff_at(t);
    }
    if (transitions.empty() || t < transitions.front()) {
        return utoffs.front(); // RFC 8536: time type 0 before the first transition
    }
    const auto after = std::upper_bound(transitions.begin(), transitions.end(), t);
    return utoffs[type_of[static_cast<std::size_t>(after - transitions.begin() - 1)]];
}

std::string ZoneRules::std_name() const {
    if (footer) {
        return footer->std_name;
    }
    for (auto it = type_of.rbegin(); it != type_of.rend(); ++it) {
        if (!is_dst[*it]) {
            return names[*it];
        }
    }
    return names.front();
}

namespace {

/// A bounds-checked big-endian reader over a TZif file.
struct TzifReader {
    std::string_view b;
    std::size_t pos = 0;
    bool ok = true;

    bool has(std::size_t n) {
        ok = ok && n <= b.size() - std::min(pos, b.size()) && pos <= b.size();
        return ok;
    }
    std::int64_t be(std::size_t n) {
        if (!has(n)) {
            return 0;
        }
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < n; ++i) {
            v = (v << 8) | static_cast<unsigned char>(b[pos++]);
        }
        if (n == 4) {
            return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
        }
        return static_cast<std::int64_t>(v);
    }
    std::uint8_t byte() { return static_cast<std::uint8_t>(be(1)); }
};

struct TzifCounts {
    std::int64_t isut = 0, isstd = 0, leap = 0, time = 0, type = 0, chars = 0;
};

/// Reads a 44-byte header; nullopt when it is not one.
std::optional<TzifCounts> header(TzifReader& r, char& version) {
    if (!r.has(44) || r.b.substr(r.pos, 4) != "TZif") {
        return std::nullopt;
    }
    version = r.b[r.pos + 4];
    r.pos += 20;
    TzifCounts c;
    for (std::int64_t* field : {&c.isut, &c.isstd, &c.leap, &c.time, &c.type, &c.chars}) {
        *field = static_cast<std::uint32_t>(r.be(4));
    }
    const bool sane = c.type >= 1 && c.type <= 256 && c.time <= 1'000'000 && c.chars <= 65536 &&
                      c.leap <= 100'000 && c.isut <= c.type && c.isstd <= c.type;
    return sane ? std::optional(c) : std::nullopt;
}

/// Reads one data block with `time_size`-byte times into `z`.
bool data_block(TzifReader& r, const TzifCounts& c, std::size_t time_size, ZoneRules& z) {
    const auto n = [](std::int64_t v) { return static_cast<std::size_t>(v); };
    if (!r.has(n(c.time) * (time_size + 1) + n(c.type) * 6 + n(c.chars))) {
        return false;
    }
    z = ZoneRules{};
    for (std::int64_t i = 0; i < c.time; ++i) {
        z.transitions.push_back(r.be(time_size));
    }
    for (std::int64_t i = 0; i < c.time; ++i) {
        z.type_of.push_back(r.byte());
    }
    std::vector<std::uint8_t> designation;
    for (std::int64_t i = 0; i < c.type; ++i) {
        z.utoffs.push_back(r.be(4));
        z.is_dst.push_back(r.byte() != 0);
        designation.push_back(r.byte());
    }
    const std::string_view chars = r.b.substr(r.pos, n(c.chars));
    r.pos += n(c.chars);
    for (const std::uint8_t d : designation) {
        if (d >= chars.size()) {
            return false;
        }
        const std::string_view rest = chars.substr(d);
        z.names.emplace_back(rest.substr(0, rest.find('\0')));
    }
    const bool types_ok = std::all_of(z.type_of.begin(), z.type_of.end(),
                                      [&](std::uint8_t t) { return t < z.utoffs.size(); });
    r.pos += n(c.leap) * (time_size + 4) + n(c.isstd) + n(c.isut);
    return types_ok && std::is_sorted(z.transitions.begin(), z.transitions.end()) && r.has(0);
}

} // namespace

Result<ZoneRules> parse_tzif(std::string_view bytes) {
    const Error bad{"not a valid tz database file (TZif)"};
    TzifReader r{bytes};
    char version = 0;
    const std::optional<TzifCounts> v1 = header(r, version);
    ZoneRules z;
    if (!v1 || !data_block(r, *v1, 4, z)) {
        return bad;
    }
    if (version == '\0') {
        return z;
    }
    const std::optional<TzifCounts> v2 = header(r, version);
    if (!v2 || !data_block(r, *v2, 8, z) || !r.has(1) || r.b[r.pos] != '\n') {
        return bad;
    }
    const std::string_view after = bytes.substr(r.pos + 1);
    const std::size_t end = after.find('\n');
    if (end == std::string_view::npos) {
        return bad;
    }
    if (end > 0) {
        Result<PosixZone> footer = parse_posix_zone(after.substr(0, end));
        if (!footer) {
            return bad;
        }
        z.footer = std::move(footer).value();
    }
    return z;
}

Result<ZoneRules> load_tzif(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string bytes;
    if (in) {
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    if (!in.good() && !in.eof()) {
        return Error{fmt::format("cannot read {}", path)};
    }
    Result<ZoneRules> rules = parse_tzif(bytes);
    if (!rules) {
        return Error{fmt::format("{}: {}", path, rules.error().message)};
    }
    return rules;
}

ZoneRules rules_of(PosixZone zone) {
    ZoneRules z;
    z.utoffs.push_back(zone.std_utoff_s);
    z.is_dst.push_back(false);
    z.names.push_back(zone.std_name);
    z.footer = std::move(zone);
    return z;
}

} // namespace gua
