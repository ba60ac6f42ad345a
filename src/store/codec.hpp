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

/// Builds one stream. The text is always complete (header + values) and ready to bind. A stream
/// whose values are all equal keeps one value ("constant"); one that repeats with the period
/// given to clear() (the same value per card slot, tick after tick) keeps one period
/// ("periodic"); any other keeps every value ("varying"). The width (1–4 code points per value)
/// grows as needed.
class StreamWriter {
  public:
    /// Empties the stream; `period` is the number of values per tick (card or process slots).
    void clear(std::size_t period = 1);
    /// Appends `value` (k_null or any other unsigned value).
    void append(std::uint64_t value);
    /// Number of values appended.
    std::size_t size() const { return m_values.size(); }
    /// The encoded stream; empty when nothing was appended.
    const std::string& text() const { return m_text; }

  private:
    enum class Mode { constant, periodic, varying };
    void rebuild();

    std::string m_text;
    std::vector<std::uint64_t> m_values;
    std::size_t m_period = 1;
    Mode m_mode = Mode::constant;
    int m_width = 1;
};

/// The values of a decoded stream without repeating what a constant or periodic stream keeps
/// once: at(i) is value i.
struct Values {
    std::vector<std::uint64_t> kept;
    std::size_t period = 1;
    bool varying = false;
    std::uint64_t at(std::size_t i) const { return varying ? kept[i] : kept[i % period]; }
};

/// Decodes the stream `text` holding `count` values with the given period into `out`. Returns
/// false when the text is malformed or too short for `count` values, without allocating for them.
bool decode(std::string_view text, std::size_t count, std::size_t period, Values& out);

/// Decodes the stream `text` holding `count` values with the given period into `out` (resized to
/// `count`). Returns false when the text is malformed.
bool decode(std::string_view text, std::size_t count, std::size_t period,
            std::vector<std::uint64_t>& out);

/// The SQL expression that decodes value number `index_sql` (0-based SQL expression) of the stream
/// in column `column` with period `period_sql`, giving an INTEGER or NULL. Used to define the
/// administrator views.
std::string value_sql(std::string_view column, std::string_view index_sql,
                      std::string_view period_sql);

} // namespace gua::store::codec
