// SPDX-License-Identifier: Apache-2.0
// Pure parsers for /proc/<pid>/stat, /proc/<pid>/status and /proc/<pid>/loginuid.
#include "identity/proc_stat.hpp"

#include <charconv>
#include <limits>

namespace gua::identity {
namespace {

constexpr std::uint32_t k_unset_loginuid = std::numeric_limits<std::uint32_t>::max();
// Field 22 (starttime) is the 20th space-separated field after the comm's closing ')'.
constexpr int k_start_field_after_comm = 20;

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && is_space(text.front())) {
        text.remove_prefix(1);
    }
    while (!text.empty() && is_space(text.back())) {
        text.remove_suffix(1);
    }
    return text;
}

// Parses a whole token as an unsigned number of type T.
template <typename T> std::optional<T> parse_number(std::string_view token) {
    T value{};
    const char* end = token.data() + token.size();
    auto [ptr, ec] = std::from_chars(token.data(), end, value);
    if (token.empty() || ec != std::errc{} || ptr != end) {
        return std::nullopt;
    }
    return value;
}

// Returns the n-th (1-based) whitespace-separated token of `text`, or empty.
std::string_view nth_token(std::string_view text, int n) {
    std::size_t pos = 0;
    for (int i = 1;; ++i) {
        while (pos < text.size() && is_space(text[pos])) {
            ++pos;
        }
        std::size_t end = pos;
        while (end < text.size() && !is_space(text[end])) {
            ++end;
        }
        if (pos == end) {
            return {};
        }
        if (i == n) {
            return text.substr(pos, end - pos);
        }
        pos = end;
    }
}

} // namespace

Result<ProcStat> parse_proc_stat(std::string_view line) {
    const std::size_t open = line.find('(');
    const std::size_t close = line.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
        return Error{"stat line has no (comm)"};
    }
    const auto start =
        parse_number<std::uint64_t>(nth_token(line.substr(close + 1), k_start_field_after_comm));
    if (!start) {
        return Error{"stat line has no numeric start time"};
    }
    return ProcStat{std::string(line.substr(open + 1, close - open - 1)), *start};
}

Result<StatusUids> parse_status_uids(std::string_view status) {
    std::size_t pos = 0;
    while (pos < status.size()) {
        std::size_t end = status.find('\n', pos);
        if (end == std::string_view::npos) {
            end = status.size();
        }
        const std::string_view line = status.substr(pos, end - pos);
        if (line.starts_with("Uid:")) {
            const auto real = parse_number<std::uint32_t>(nth_token(line.substr(4), 1));
            const auto effective = parse_number<std::uint32_t>(nth_token(line.substr(4), 2));
            const auto saved = parse_number<std::uint32_t>(nth_token(line.substr(4), 3));
            if (real && effective && saved) {
                return StatusUids{*real, *effective, *saved};
            }
            return Error{"malformed Uid: line in status"};
        }
        pos = end + 1;
    }
    return Error{"no Uid: line in status"};
}

Result<std::uint32_t> parse_status_real_uid(std::string_view status) {
    Result<StatusUids> uids = parse_status_uids(status);
    if (!uids) {
        return uids.error();
    }
    return uids.value().real;
}

std::optional<std::uint32_t> parse_loginuid(std::string_view text) {
    const auto uid = parse_number<std::uint32_t>(trim(text));
    if (!uid || *uid == k_unset_loginuid) {
        return std::nullopt;
    }
    return uid;
}

} // namespace gua::identity
