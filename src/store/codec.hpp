// SPDX-License-Identifier: Apache-2.0
// Value streams: sequences of unsigned integers stored as SQLite TEXT, one Unicode code point per
// 20-bit digit, so that plain SQL can decode them with unicode(substr(...)) (docs/schema.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace gua::store::codec {

/// The stream value that stands for SQL NULL ("not measured").
inline constexpr std::uint64_t k_null = std::numeric_limits<std::uint64_t>::max();

/// Maps a signed value to an unsigned one with small magnitudes staying small (0, -1, 1, -2 …).
constexpr std::uint64_t zigzag(std::int64_t v) {
    return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
/// Inverse of zigzag().
constexpr std::int64_t unzigzag(std::uint64_t z) {
    return static_cast<std::int64_t>(z >> 1) ^ -static_cast<std::int64_t>(z & 1);
}

/// Builds one stream. The text is complete (header + values) and ready to bind whenever asked
/// for. A stream whose values are all equal keeps one value ("constant"); one that repeats with
/// the period given to clear() (the same value per card slot, tick after tick) keeps one period
/// ("periodic"); one where some slots repeat and others do not keeps one value for each steady
/// slot and every value of the others ("slotted"), when that is shorter than keeping every value
/// ("varying"). The width (1–4 code points per value) grows as needed.
class StreamWriter {
  public:
    /// Empties the stream; `period` is the number of values per tick (card or process slots).
    void clear(std::size_t period = 1);
    /// Appends `value` (k_null or any other unsigned value).
    void append(std::uint64_t value);
    /// Number of values appended.
    std::size_t size() const { return m_count; }
    /// The encoded stream; empty when nothing was appended.
    const std::string& text() const;

  private:
    struct Slot {
        std::uint64_t first = 0;
        bool steady = true;                ///< every value so far equals `first`
        std::vector<std::uint64_t> values; ///< all its values once it is not steady
        std::size_t count = 0;
    };
    void build() const;

    std::vector<Slot> m_slots;
    std::size_t m_period = 1;
    std::size_t m_count = 0;
    std::size_t m_unsteady = 0; ///< slots that are not steady
    bool m_equal = true;        ///< every value equals the first one
    int m_width = 1;
    mutable std::string m_text;
    mutable bool m_stale = false;
};

/// The values of a decoded stream without repeating what a constant, periodic or slotted stream
/// keeps once: at(i) is value i.
struct Values {
    std::vector<std::uint64_t> kept;
    std::size_t period = 1;
    bool varying = false;
    /// Slotted streams only: where each slot's values start in `kept`, and 1 for a slot that
    /// keeps every value (0 for a steady one).
    std::vector<std::uint32_t> slot_start;
    std::vector<std::uint8_t> slot_step;
    std::uint64_t at(std::size_t i) const {
        if (varying) {
            return kept[i];
        }
        if (slot_start.empty()) {
            return kept[period == 1 ? 0 : i % period]; // a constant stream: no division
        }
        const std::size_t s = i % period;
        return kept[slot_start[s] + slot_step[s] * (i / period)];
    }
};

/// Decodes the stream `text` holding `count` values with the given period into `out`. Returns
/// false when the text is malformed or too short for `count` values, without allocating for them.
bool decode(std::string_view text, std::size_t count, std::size_t period, Values& out);

/// Decodes the stream `text` holding `count` values with the given period into `out` (resized to
/// `count`). Returns false when the text is malformed.
bool decode(std::string_view text, std::size_t count, std::size_t period,
            std::vector<std::uint64_t>& out);

/// The SQL expression that decodes value number `index_sql` (0-based SQL expression) of the stream
/// in column `column` with period `period_sql` and `ticks_sql` values per slot, giving an INTEGER
/// or NULL. Used to define the administrator views.
std::string value_sql(std::string_view column, std::string_view index_sql,
                      std::string_view period_sql, std::string_view ticks_sql);

} // namespace gua::store::codec
