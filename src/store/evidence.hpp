// The per-card totals that rollup rows keep in one BLOB (the `evidence` column): the recommender's
// waste pools and card profile, and the card's measurement provenance. (field number, 8-byte
// value) pairs for the non-zero fields only, so an idle card costs nothing.
#pragma once

#include "audit/pools.hpp"
#include "audit/window.hpp"

#include <string>
#include <string_view>

namespace gua::store {

/// Encodes the pools, the profile and the provenance of one card (little-endian, zero fields
/// left out). Field numbers are frozen (docs/schema.md lists them).
std::string encode_evidence(const audit::GpuTotals& totals);

/// Decodes a BLOB written by encode_evidence() into the pools, profile and provenance of `totals`
/// (all three reset first; its other members are left alone). Unknown field numbers and a
/// truncated tail are ignored; a BLOB written before schema 4 leaves the provenance all zero.
void decode_evidence(std::string_view blob, audit::GpuTotals& totals);

} // namespace gua::store
