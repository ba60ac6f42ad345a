// SPDX-License-Identifier: Apache-2.0
// Test helper: parses an exposition into series → value, failing the test on format violations
// (HELP/TYPE before samples, contiguous families, unique series, final newline).
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>

namespace gua::exporter::testing {

/// True when `series` ("name{labels}") belongs to a counter family (name ends in _total).
inline bool is_counter(const std::string& series) {
    return series.substr(0, series.find('{')).ends_with("_total");
}

/// "name{labels}" (exactly as written) → value.
inline std::map<std::string, double> parse_exposition(const std::string& text) {
    std::map<std::string, double> out;
    if (!text.empty() && text.back() != '\n') {
        ADD_FAILURE() << "the exposition must end in a newline";
    }
    std::set<std::string> typed;
    std::set<std::string> closed;
    std::string current;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.starts_with("# HELP ") || line.starts_with("# TYPE ")) {
            const std::string name = line.substr(7, line.find(' ', 7) - 7);
            if (line.starts_with("# TYPE ")) {
                EXPECT_TRUE(typed.insert(name).second) << "second TYPE for " << name;
            }
            continue;
        }
        const std::size_t space = line.rfind(' ');
        const std::string series = line.substr(0, space);
        const std::string name = series.substr(0, series.find('{'));
        EXPECT_TRUE(typed.contains(name)) << "sample before TYPE: " << line;
        if (name != current) {
            EXPECT_FALSE(closed.contains(name)) << "family not contiguous: " << name;
            closed.insert(current);
            current = name;
        }
        EXPECT_FALSE(out.contains(series)) << "duplicate series " << series;
        out[series] = std::stod(line.substr(space + 1));
    }
    return out;
}

} // namespace gua::exporter::testing
