// The totals that rollup rows keep in one BLOB (the `evidence` column): per card the recommender's
// waste pools and card profile, its measurement provenance and its health totals; per identity its
// health totals. (field number, 8-byte value) pairs for the non-zero fields only, so an idle card
// costs nothing.
#pragma once

#include "audit/pools.hpp"
#include "audit/window.hpp"

#include <string>
#include <string_view>

namespace gua::store {

/// Encodes the pools, the profile and the provenance of one card (little-endian, zero fields
/// left out). Field numbers are frozen (docs/schema.md lists them).
std::string encode_evidence(const audit::GpuTotals& totals);

/// Decodes a BLOB written by encode_evidence() into the pools, profile, provenance, overlap and
/// health of `totals` (all reset first; its other members are left alone). Unknown field numbers
/// and a truncated tail are ignored; a BLOB written before schema 4 leaves the provenance all
/// zero, one written before the health totals leaves them zero (no energy known: "n/a").
void decode_evidence(std::string_view blob, audit::GpuTotals& totals);

/// Encodes the health totals of one identity on one card (same layout, its own field numbers).
std::string encode_identity_evidence(const audit::IdentityTotals& totals);

/// Decodes a BLOB written by encode_identity_evidence() into `totals.health` (reset first); an
/// empty BLOB (rows written before schema 8) leaves it zero.
void decode_identity_evidence(std::string_view blob, audit::IdentityTotals& totals);

} // namespace gua::store
