// SPDX-License-Identifier: Apache-2.0
// The HTML report's inline style sheet.
#pragma once

#include <string_view>

namespace gua::report::html {

/// The whole style sheet (light and dark schemes via prefers-color-scheme, narrow screens,
/// @media print), without the <style> tags.
extern const std::string_view k_style;

} // namespace gua::report::html
