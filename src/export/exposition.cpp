// Text format 0.0.4 rendering (ecosystem.md §1.1).
#include "export/exposition.hpp"

#include "core/fatal.hpp"

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

std::string label_block(const Labels& labels) {
    if (labels.empty()) {
        return {};
    }
    std::string out = "{";
    for (std::size_t i = 0; i < labels.size(); ++i) {
        if (i > 0) {
            out += ',';
        }
        out += labels[i].first;
        out += "=\"";
        out += escape_label_value(labels[i].second);
        out += '"';
    }
    return out + "}";
}

} // namespace

std::string escape_label_value(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (const char c : value) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '"') {
            out += "\\\"";
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
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
    std::string out;
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
            out += format_value(value);
            out += '\n';
        }
    }
    return out;
}

} // namespace gua::exporter
