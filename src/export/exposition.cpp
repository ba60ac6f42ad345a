// SPDX-License-Identifier: Apache-2.0
// Text format 0.0.4 rendering (ecosystem.md §1.1).
#include "export/exposition.hpp"

#include "core/fatal.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gua::exporter {

namespace {

std::string escape_help(std::string_view text) {
    std::string out;
    for (const char c : text) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

/// Appends `value` escaped as a label value (backslash, double quote, newline) to `out`.
void append_escaped(std::string& out, std::string_view value) {
    // Label values rarely need escaping: three memchr passes beat a loop over every character.
    constexpr auto npos = std::string_view::npos;
    if (value.find('\\') == npos && value.find('"') == npos && value.find('\n') == npos) {
        out.append(value);
        return;
    }
    std::size_t start = 0;
    for (std::size_t i = 0; i < value.size(); ++i) {
        const char c = value[i];
        if (c != '\\' && c != '"' && c != '\n') {
            continue;
        }
        out.append(value.data() + start, i - start);
        out += c == '\n' ? "\\n" : c == '"' ? "\\\"" : "\\\\";
        start = i + 1;
    }
    out.append(value.data() + start, value.size() - start);
}

std::string label_block(const Labels& labels) {
    if (labels.empty()) {
        return {};
    }
    std::size_t size = 2;
    for (const auto& [name, value] : labels) {
        size += name.size() + value.size() + 4;
    }
    std::string out;
    out.reserve(size);
    out += '{';
    for (std::size_t i = 0; i < labels.size(); ++i) {
        if (i > 0) {
            out += ',';
        }
        out += labels[i].first;
        out += "=\"";
        append_escaped(out, labels[i].second);
        out += '"';
    }
    out += '}';
    return out;
}

/// Appends the sample value as format_value writes it.
void append_value(std::string& out, double value) {
    if (std::isfinite(value)) {
        fmt::format_to(std::back_inserter(out), FMT_COMPILE("{}"), value);
    } else {
        out += format_value(value);
    }
}

} // namespace

std::string escape_label_value(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    append_escaped(out, value);
    return out;
}

std::string format_value(double value) {
    if (std::isnan(value)) {
        return "NaN";
    }
    if (std::isinf(value)) {
        return value > 0 ? "+Inf" : "-Inf";
    }
    return fmt::format("{}", value);
}

void Exposition::family(std::string_view name, MetricType type, std::string_view help) {
    const auto it = std::find_if(m_families.begin(), m_families.end(),
                                 [&](const Family& f) { return f.name == name; });
    if (it == m_families.end()) {
        m_families.push_back(Family{std::string(name), type, std::string(help), {}});
    }
}

Exposition::Family& Exposition::find(std::string_view name) {
    const auto it = std::find_if(m_families.begin(), m_families.end(),
                                 [&](const Family& f) { return f.name == name; });
    if (it == m_families.end()) {
        throw Fatal(fmt::format("internal error: metric family {} was not declared", name));
    }
    return *it;
}

void Exposition::add(std::string_view name, const Labels& labels, double value) {
    find(name).samples[label_block(labels)] += value;
}

std::string Exposition::render() const {
    std::size_t size = 0;
    for (const Family& f : m_families) {
        size += f.name.size() + f.help.size() + 40;
        for (const auto& [labels, value] : f.samples) {
            size += f.name.size() + labels.size() + 26; // a value is at most 24 characters
        }
    }
    std::string out;
    out.reserve(size);
    for (const Family& f : m_families) {
        if (f.samples.empty()) {
            continue;
        }
        out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", f.name, escape_help(f.help), f.name,
                           f.type == MetricType::counter ? "counter" : "gauge");
        for (const auto& [labels, value] : f.samples) {
            out += f.name;
            out += labels;
            out += ' ';
            append_value(out, value);
            out += '\n';
        }
    }
    return out;
}

} // namespace gua::exporter
