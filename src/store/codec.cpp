// Value streams: a header code point ('a'–'d' constant, 'Q'–'T' periodic, 'A'–'D' varying; the
// header modulo 16 is the width) followed by values of `width` base-2^20 digits, each digit d
// stored as code point d + 2 (skipping the UTF-16 surrogate range, and U+FFFE/U+FFFF moved past
// the last digit), code point 1 marking NULL.
#include "store/codec.hpp"

#include <fmt/format.h>

namespace gua::store::codec {

namespace {

constexpr int k_digit_bits = 20;
constexpr std::uint64_t k_digit_mask = (1ULL << k_digit_bits) - 1;
constexpr std::uint32_t k_null_code = 1;
constexpr std::uint32_t k_surrogate_first = 0xD800;
constexpr std::uint32_t k_surrogate_count = 0x800;
// SQLite's unicode() reads U+FFFE and U+FFFF as U+FFFD, like surrogates. Their two digits are
// stored as the two code points after the largest digit's instead; files written before schema 4
// may hold U+FFFE/U+FFFF, which still decode here (not through SQL).
constexpr std::uint32_t k_nonchar_first = 0xFFFE;
constexpr std::uint32_t k_moved_first = (1U << k_digit_bits) + 2 + k_surrogate_count;

int width_of(std::uint64_t v) {
    if (v == k_null) {
        return 1;
    }
    int w = 1;
    while (w < 4 && (v >> (k_digit_bits * w)) != 0) {
        ++w;
    }
    return w;
}

void put_code(std::string& out, std::uint32_t c) {
    if (c < 0x80) {
        out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (c >> 6)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (c >> 12)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (c >> 18)));
        out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
}

void put_value(std::string& out, std::uint64_t v, int width) {
    for (int i = width - 1; i >= 0; --i) {
        if (v == k_null) {
            put_code(out, k_null_code);
            continue;
        }
        auto c = static_cast<std::uint32_t>((v >> (k_digit_bits * i)) & k_digit_mask) + 2;
        if (c >= k_surrogate_first) {
            c += k_surrogate_count;
        }
        if (c == k_nonchar_first || c == k_nonchar_first + 1) {
            c = k_moved_first + (c - k_nonchar_first);
        }
        put_code(out, c);
    }
}

/// Reads one code point at `pos`; returns 0 on malformed input.
std::uint32_t get_code(std::string_view s, std::size_t& pos) {
    if (pos >= s.size()) {
        return 0;
    }
    const auto b0 = static_cast<unsigned char>(s[pos]);
    int extra = 0;
    std::uint32_t c = 0;
    if (b0 < 0x80) {
        ++pos;
        return b0;
    }
    if ((b0 & 0xE0) == 0xC0) {
        extra = 1;
        c = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
        extra = 2;
        c = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
        extra = 3;
        c = b0 & 0x07;
    } else {
        return 0;
    }
    if (pos + static_cast<std::size_t>(extra) >= s.size()) {
        return 0;
    }
    for (int i = 1; i <= extra; ++i) {
        const auto b = static_cast<unsigned char>(s[pos + static_cast<std::size_t>(i)]);
        if ((b & 0xC0) != 0x80) {
            return 0;
        }
        c = (c << 6) | (b & 0x3F);
    }
    pos += static_cast<std::size_t>(extra) + 1;
    return c;
}

/// Reads one value of `width` digits; false on malformed input.
bool get_value(std::string_view s, std::size_t& pos, int width, std::uint64_t& v) {
    v = 0;
    for (int i = 0; i < width; ++i) {
        std::uint32_t c = get_code(s, pos);
        if (c == 0) {
            return false;
        }
        if (c == k_null_code) {
            v = k_null;
            continue;
        }
        if (c == k_moved_first || c == k_moved_first + 1) {
            c = k_nonchar_first + (c - k_moved_first);
        } else if (c > k_moved_first + 1 ||
                   (c >= k_surrogate_first && c < k_surrogate_first + k_surrogate_count)) {
            return false;
        }
        if (c >= k_surrogate_first + k_surrogate_count) {
            c -= k_surrogate_count;
        }
        if (v != k_null) {
            v = (v << k_digit_bits) | (c - 2);
        }
    }
    return true;
}

} // namespace

void StreamWriter::clear(std::size_t period) {
    m_text.clear();
    m_values.clear();
    m_period = std::max<std::size_t>(period, 1);
    m_mode = Mode::constant;
    m_width = 1;
}

void StreamWriter::rebuild() {
    const char base = m_mode == Mode::constant ? 'a' : (m_mode == Mode::periodic ? 'Q' : 'A');
    m_text.clear();
    put_code(m_text, static_cast<std::uint32_t>(base + m_width - 1));
    const std::size_t kept =
        m_mode == Mode::constant
            ? 1
            : (m_mode == Mode::periodic ? std::min(m_period, m_values.size()) : m_values.size());
    for (std::size_t i = 0; i < kept; ++i) {
        put_value(m_text, m_values[i], m_width);
    }
}

void StreamWriter::append(std::uint64_t value) {
    const std::size_t i = m_values.size();
    m_values.push_back(value);
    const int width = std::max(m_width, width_of(value));
    Mode mode = m_mode;
    if (mode == Mode::constant && value != m_values.front()) {
        mode = m_period > 1 ? Mode::periodic : Mode::varying;
    }
    if (mode == Mode::periodic && i >= m_period && value != m_values[i % m_period]) {
        mode = Mode::varying;
    }
    if (mode != m_mode || width != m_width || i == 0) {
        m_mode = mode;
        m_width = width;
        rebuild();
    } else if (mode == Mode::varying || (mode == Mode::periodic && i < m_period)) {
        put_value(m_text, value, m_width);
    }
}

bool decode(std::string_view text, std::size_t count, std::size_t period, Values& out) {
    out.kept.clear();
    out.period = std::max<std::size_t>(period, 1);
    out.varying = false;
    if (count == 0) {
        return true;
    }
    std::size_t pos = 0;
    const std::uint32_t header = get_code(text, pos);
    std::size_t kept = 0;
    if (header >= 'a' && header <= 'd') {
        kept = 1;
        out.period = 1;
    } else if (header >= 'Q' && header <= 'T') {
        kept = std::min(out.period, count);
    } else if (header >= 'A' && header <= 'D') {
        kept = count;
        out.varying = true;
    } else {
        return false;
    }
    const int width = static_cast<int>(header % 16);
    // Every digit takes at least one byte: a count the text cannot hold is rejected before
    // anything is allocated for it.
    if ((text.size() - pos) / static_cast<std::size_t>(width) < kept) {
        return false;
    }
    out.kept.resize(kept);
    for (std::size_t i = 0; i < kept; ++i) {
        if (!get_value(text, pos, width, out.kept[i])) {
            return false;
        }
    }
    return pos == text.size();
}

bool decode(std::string_view text, std::size_t count, std::size_t period,
            std::vector<std::uint64_t>& out) {
    Values v;
    if (!decode(text, count, period, v)) {
        return false;
    }
    out.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
        out[i] = v.at(i);
    }
    return true;
}

std::string value_sql(std::string_view column, std::string_view index_sql,
                      std::string_view period_sql) {
    // h = header, w = width, p = 1-based position of the value's first digit, c<j> = code point
    // of digit j, d<j> = its digit value.
    std::string codes;
    std::string digits;
    std::string sum;
    for (int j = 0; j < 4; ++j) {
        codes += fmt::format(", unicode(substr({}, p + {}, 1)) AS c{}", column, j, j);
        digits += fmt::format(", CASE c{0} WHEN {1} THEN {2} WHEN {3} THEN {4} ELSE c{0} - 2 - "
                              "(c{0} >= {5}) * {6} END AS d{0}",
                              j, k_moved_first, k_nonchar_first - 2 - k_surrogate_count,
                              k_moved_first + 1, k_nonchar_first - 1 - k_surrogate_count,
                              k_surrogate_first + k_surrogate_count, k_surrogate_count);
        sum += fmt::format("{}CASE WHEN w > {} THEN d{} << (20 * (w - {})) ELSE 0 END",
                           j == 0 ? "" : " + ", j, j, j + 1);
    }
    return fmt::format("(SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE {0} END FROM "
                       "(SELECT w, c0{1} FROM (SELECT w{2} FROM (SELECT w, 2 + w * CASE WHEN "
                       "h >= 97 THEN 0 WHEN h >= 81 THEN ({3}) % ({5}) ELSE ({3}) END AS p FROM "
                       "(SELECT unicode({4}) AS h, unicode({4}) % 16 AS w)))))",
                       sum, digits, codes, index_sql, column, period_sql);
}

} // namespace gua::store::codec
