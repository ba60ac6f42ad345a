// SPDX-License-Identifier: Apache-2.0
// The evidence BLOB's byte formats over a table of numbered fields (docs/schema.md): the compact
// format of schema 9, written and read, and the (number, 8 bytes) entries of schemas 3 to 8, read.
#pragma once

#include "core/time.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace gua::store::evidence_format {

/// A field of the evidence: its frozen number and a double or an integer member.
struct Field {
    std::uint8_t number;
    std::variant<double*, DurationUs*> value;
};

/// Encodes the non-zero members of `fields` (in ascending number order) in the compact format:
/// each value with the same bits when decoded; empty when every member is zero.
std::string encode(std::span<const Field> fields);

/// Decodes `blob` of either format into the members of `fields`, which the caller has zeroed.
/// Numbers the table lacks are skipped; a truncated or malformed tail is ignored (the values
/// before it stay).
void decode(std::string_view blob, std::span<const Field> fields);

} // namespace gua::store::evidence_format
