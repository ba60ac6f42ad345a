// SPDX-License-Identifier: Apache-2.0
// Proportional bars of text cells: largest remainder, never hiding a non-zero share.
#include "core/bar.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace gua {

std::vector<int> bar_cells(std::span<const double> shares, int width) {
    std::vector<int> cells(shares.size(), 0);
    double sum = 0;
    for (const double s : shares) {
        if (!std::isfinite(s) || s < 0) {
            return cells;
        }
        sum += s;
    }
    if (sum <= 0 || width <= 0) {
        return cells;
    }
    std::vector<double> rest(shares.size(), 0);
    int used = 0;
    for (std::size_t i = 0; i < shares.size(); ++i) {
        const double exact = shares[i] / sum * width;
        cells[i] = std::min(width, static_cast<int>(std::floor(exact)));
        rest[i] = exact - cells[i];
        used += cells[i];
    }
    while (used < width) {
        const auto best = static_cast<std::size_t>(
            std::distance(rest.begin(), std::max_element(rest.begin(), rest.end())));
        ++cells[best];
        rest[best] = -1;
        ++used;
    }
    if (static_cast<std::size_t>(width) < shares.size()) {
        return cells;
    }
    for (std::size_t i = 0; i < shares.size(); ++i) {
        if (shares[i] > 0 && cells[i] == 0) {
            const auto donor = static_cast<std::size_t>(
                std::distance(cells.begin(), std::max_element(cells.begin(), cells.end())));
            --cells[donor];
            ++cells[i];
        }
    }
    return cells;
}

std::string repeat(std::string_view glyph, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) {
        out += glyph;
    }
    return out;
}

} // namespace gua
