// SPDX-License-Identifier: Apache-2.0
// Proportional bars of text cells, one algorithm for every renderer that draws shares as cells
// (`gua report`'s headline, `gua now`/`gua top`'s per-card bars).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gua {

/// Cells per share for a bar `width` cells wide: shares are normalised by their sum, whole cells
/// go by largest remainder, so a measured bar is always exactly `width` wide; when `width` is at
/// least the number of shares, a non-zero share never rounds to zero cells (it takes one from
/// the largest). All zero when the shares sum to zero (or a share is negative or not finite) or
/// `width` ≤ 0.
std::vector<int> bar_cells(std::span<const double> shares, int width);

/// `glyph` repeated `n` times (nothing for n ≤ 0).
std::string repeat(std::string_view glyph, int n);

} // namespace gua
