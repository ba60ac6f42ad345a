// SPDX-License-Identifier: Apache-2.0
// Value streams: a header code point ('a'–'d' constant, 'Q'–'T' periodic, 'A'–'D' varying, 'q'–'t'
// slotted; the header modulo 16 is the width), for slotted streams one mode code point per slot
// (2 steady, 3 every value), then values of `width` base-2^20 digits, each digit d
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
// The per-slot modes of a slotted stream: a steady slot keeps one value, the others every value.
constexpr std::uint32_t k_steady_code = 2;
constexpr std::uint32_t k_every_code = 3;

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
    m_period = std::max<std::size_t>(period, 1);
    if (m_slots.size() < m_period) {
        m_slots.resize(m_period);
    }
    for (std::size_t s = 0; s < m_period; ++s) {
        m_slots[s].steady = true;
        m_slots[s].values.clear(); // keeps its storage for the next block
        m_slots[s].count = 0;
    }
    m_count = 0;
    m_unsteady = 0;
    m_equal = true;
    m_width = 1;
    m_text.clear();
    m_stale = false;
}

void StreamWriter::append(std::uint64_t value) {
    Slot& slot = m_slots[m_count % m_period];
    if (slot.count == 0) {
        slot.first = value;
    } else if (slot.steady && value != slot.first) {
        slot.steady = false;
        ++m_unsteady;
        slot.values.assign(slot.count, slot.first);
    }
    if (!slot.steady) {
        slot.values.push_back(value);
    }
    ++slot.count;
    m_equal = m_equal && value == m_slots[0].first;
    ++m_count;
    m_width = std::max(m_width, width_of(value));
    m_stale = true;
}

const std::string& StreamWriter::text() const {
    if (m_stale) {
        build();
    }
    return m_text;
}

void StreamWriter::build() const {
    m_stale = false;
    m_text.clear();
    if (m_count == 0) {
        return;
    }
    const auto header = [&](char base) {
        put_code(m_text, static_cast<std::uint32_t>(base + m_width - 1));
    };
    if (m_equal) {
        header('a');
        put_value(m_text, m_slots[0].first, m_width);
        return;
    }
    if (m_unsteady == 0) {
        header('Q');
        for (std::size_t s = 0; s < std::min(m_period, m_count); ++s) {
            put_value(m_text, m_slots[s].first, m_width);
        }
        return;
    }
    // Code points of each form: slotted pays one mode per slot and keeps one value of a steady
    // slot; varying keeps every value. Slotted needs whole ticks (as many values in every slot).
    const std::size_t n = m_count / m_period;
    const auto width = static_cast<std::size_t>(m_width);
    const std::size_t slotted = m_period + ((m_period - m_unsteady) + m_unsteady * n) * width;
    if (m_period > 1 && m_count % m_period == 0 && slotted < m_count * width) {
        header('q');
        for (std::size_t s = 0; s < m_period; ++s) {
            put_code(m_text, m_slots[s].steady ? k_steady_code : k_every_code);
        }
        for (std::size_t s = 0; s < m_period; ++s) {
            const Slot& slot = m_slots[s];
            if (slot.steady) {
                put_value(m_text, slot.first, m_width);
            } else {
                for (const std::uint64_t v : slot.values) {
                    put_value(m_text, v, m_width);
                }
            }
        }
        return;
    }
    header('A');
    for (std::size_t i = 0; i < m_count; ++i) {
        const Slot& slot = m_slots[i % m_period];
        put_value(m_text, slot.steady ? slot.first : slot.values[i / m_period], m_width);
    }
}

bool decode(std::string_view text, std::size_t count, std::size_t period, Values& out) {
    out.kept.clear();
    out.slot_start.clear();
    out.slot_step.clear();
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
    } else if (header >= 'q' && header <= 't') {
        // One mode per slot, then each slot's values; every slot holds count / period of them.
        if (count % out.period != 0 || text.size() - pos < out.period) {
            return false;
        }
        const std::size_t n = count / out.period;
        out.slot_start.resize(out.period);
        out.slot_step.resize(out.period);
        for (std::size_t s = 0; s < out.period; ++s) {
            const std::uint32_t mode = get_code(text, pos);
            if (mode != k_steady_code && mode != k_every_code) {
                return false;
            }
            out.slot_start[s] = static_cast<std::uint32_t>(std::min<std::size_t>(kept, UINT32_MAX));
            out.slot_step[s] = mode == k_every_code ? 1 : 0;
            kept += mode == k_every_code ? n : 1;
            if (kept > text.size()) { // one byte at least per value: rejected before allocating
                return false;
            }
        }
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
                      std::string_view period_sql, std::string_view ticks_sql) {
    // From the inside out (shallow expressions: SQLite's parser stack is small): h = header, ix
    // = value index, pp = period; s/k = the value's slot and tick; p = 1-based position of its
    // first digit (slotted: after the modes and the earlier slots' values, a steady slot's one,
    // the changing slots before it counted with replace()); c<j> = code point of digit j, NULL
    // past the width; d<j> = digit value, so that a NULL digit's term drops out of the sum.
    std::string codes;
    std::string digits;
    for (int j = 0; j < 4; ++j) {
        codes += j == 0 ? fmt::format("unicode(substr({}, p, 1)) AS c0", column)
                        : fmt::format(", CASE WHEN w > {0} THEN unicode(substr({1}, p + {0}, 1)) "
                                      "END AS c{0}",
                                      j, column);
        digits += fmt::format(", c{0} - 2 - (c{0} >= {1}) * {2} - (c{0} >= {3}) * {4} AS d{0}", j,
                              k_surrogate_first + k_surrogate_count, k_surrogate_count,
                              k_moved_first, k_moved_first - k_nonchar_first);
    }
    return fmt::format(
        "(SELECT CASE WHEN c0 IS NULL OR c0 = 1 THEN NULL ELSE (d0 << 20 * (w - 1)) + coalesce(d1 "
        "<< 20 * (w - 2), 0) + coalesce(d2 << 20 * (w - 3), 0) + coalesce(d3, 0) END FROM (SELECT "
        "w, c0{0} FROM (SELECT w, {1} FROM (SELECT w, CASE WHEN h >= 113 THEN 2 + pp + w * s + w "
        "* ({2} - 1) * (length(substr({3}, 2, s)) - length(replace(substr({3}, 2, s), char(3), "
        "''))) + w * k * (unicode(substr({3}, 2 + s, 1)) - 2) WHEN h >= 97 THEN 2 WHEN h >= 81 "
        "THEN 2 + w * s ELSE 2 + w * ix END AS p FROM (SELECT h % 16 AS w, h, ix, pp, ix % pp AS "
        "s, ix / pp AS k FROM (SELECT unicode({3}) AS h, {4} AS ix, {5} AS pp))))))",
        digits, codes, ticks_sql, column, index_sql, period_sql);
}

} // namespace gua::store::codec
