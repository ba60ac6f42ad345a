// SPDX-License-Identifier: Apache-2.0
// ISO 8601 formatting and parsing of UTC microsecond timestamps.
#include "core/time.hpp"

#include <fmt/format.h>

#include <charconv>
#include <ctime>

namespace gua {

std::string format_iso8601(TimeUs t) {
    std::time_t secs = static_cast<std::time_t>(t / k_us_per_second);
    if (t < 0 && t % k_us_per_second != 0) {
        --secs;
    }
    std::tm tm{};
    gmtime_r(&secs, &tm);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                       tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

namespace {

bool read_int(std::string_view& s, std::size_t digits, int& out) {
    if (s.size() < digits) {
        return false;
    }
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + digits, out);
    if (ec != std::errc{} || ptr != s.data() + digits) {
        return false;
    }
    s.remove_prefix(digits);
    return true;
}

bool eat(std::string_view& s, char c) {
    if (!s.empty() && s.front() == c) {
        s.remove_prefix(1);
        return true;
    }
    return false;
}

} // namespace

Result<TimeUs> parse_iso8601(std::string_view text) {
    const Error bad{
        fmt::format("invalid time '{}' (expected ISO 8601, e.g. 2026-05-11T08:00:00Z)", text)};
    std::string_view s = text;
    std::tm tm{};
    int year = 0;
    int month = 0;
    int day = 0;
    if (!read_int(s, 4, year) || !eat(s, '-') || !read_int(s, 2, month) || !eat(s, '-') ||
        !read_int(s, 2, day)) {
        return bad;
    }
    int hour = 0;
    int minute = 0;
    int second = 0;
    std::int64_t micros = 0;
    if (eat(s, 'T') || eat(s, ' ')) {
        if (!read_int(s, 2, hour) || !eat(s, ':') || !read_int(s, 2, minute)) {
            return bad;
        }
        if (eat(s, ':')) {
            if (!read_int(s, 2, second)) {
                return bad;
            }
            if (eat(s, '.')) {
                std::size_t n = 0;
                std::int64_t scale = 100000;
                while (!s.empty() && s.front() >= '0' && s.front() <= '9') {
                    micros += (s.front() - '0') * scale;
                    scale /= 10;
                    s.remove_prefix(1);
                    ++n;
                }
                if (n == 0) {
                    return bad;
                }
            }
        }
    }
    std::int64_t offset_s = 0;
    if (eat(s, 'Z') || eat(s, 'z')) {
    } else if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
        const int sign = s.front() == '-' ? -1 : 1;
        s.remove_prefix(1);
        int oh = 0;
        int om = 0;
        if (!read_int(s, 2, oh)) {
            return bad;
        }
        eat(s, ':');
        if ((!s.empty() && !read_int(s, 2, om)) || oh > 23 || om > 59) {
            return bad;
        }
        offset_s = sign * (oh * 3600 + om * 60);
    }
    if (!s.empty() || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 ||
        second > 60) {
        return bad;
    }
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    const std::time_t secs = timegm(&tm);
    if (tm.tm_mday != day) {
        return bad; // e.g. February 30th was normalised into March
    }
    return (static_cast<std::int64_t>(secs) - offset_s) * k_us_per_second + micros;
}

TimeUs wall_now() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<TimeUs>(ts.tv_sec) * k_us_per_second + ts.tv_nsec / 1000;
}

} // namespace gua
