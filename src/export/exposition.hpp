// SPDX-License-Identifier: Apache-2.0
// The Prometheus text format 0.0.4 written by hand: families with HELP/TYPE, escaped labels,
// one line per unique label set (duplicates are summed, so a series can never appear twice).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gua::exporter {

/// The content type of the text format this module writes.
inline constexpr const char* k_content_type = "text/plain; version=0.0.4; charset=utf-8";

/// A metric family's type.
enum class MetricType { counter, gauge };

/// Label name/value pairs in the order they are written.
using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

/// `labels` with one more pair after them (the views must outlive the result's use).
inline Labels with(const Labels& labels, std::string_view name, std::string_view value) {
    Labels out = labels;
    out.emplace_back(name, value);
    return out;
}

/// Escapes a label value (backslash, double quote, newline).
std::string escape_label_value(std::string_view value);

/// Formats a sample value: shortest round-trip decimal, "NaN", "+Inf" or "-Inf".
std::string format_value(double value);

/// Collects families and renders them in the order they were first declared.
class Exposition {
  public:
    /// Declares family `name` (the caller guarantees a valid name with its unit and, for
    /// counters, the `_total` suffix). Declaring it again keeps the first HELP and TYPE.
    void family(std::string_view name, MetricType type, std::string_view help);
    /// Adds `value` to the series `labels` of the declared family `name` (summing when the
    /// same label set is added twice).
    void add(std::string_view name, const Labels& labels, double value);
    /// The exposition text; every line ends in '\n'. Families without samples are left out.
    std::string render() const;

  private:
    struct Family {
        std::string name;
        MetricType type = MetricType::gauge;
        std::string help;
        std::map<std::string, double> samples; ///< rendered label block → value
    };
    Family& find(std::string_view name);

    std::vector<Family> m_families;
};

} // namespace gua::exporter
