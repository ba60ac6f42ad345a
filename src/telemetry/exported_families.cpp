// SPDX-License-Identifier: Apache-2.0
// The label lists of exported_families.def, split into names.
#include "telemetry/exported_families.hpp"

namespace gua::telemetry {

std::vector<std::string> family_labels(Family f) {
    std::vector<std::string> out;
    const std::string_view labels = exported(f).labels;
    std::size_t start = 0;
    while (start < labels.size()) {
        std::size_t end = labels.find(' ', start);
        if (end == std::string_view::npos) {
            end = labels.size();
        }
        if (end > start) {
            out.emplace_back(labels.substr(start, end - start));
        }
        start = end + 1;
    }
    return out;
}

} // namespace gua::telemetry
