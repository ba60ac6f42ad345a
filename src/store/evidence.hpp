// SPDX-License-Identifier: Apache-2.0
// The totals that rollup rows keep in one BLOB (the `evidence` column): per card the recommender's
// waste pools and card profile, its measurement provenance and its health totals; per identity its
// health totals. Non-zero fields only, as varints where a value is an integer (docs/schema.md).
#pragma once

#include "audit/pools.hpp"
#include "audit/window.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace gua::store {

/// Encodes the pools, the profile, the provenance and the health totals of one card in the
/// compact format of schema 9 (zero fields left out; empty when all are zero). Field numbers are
/// frozen (docs/schema.md lists them); every value reads back with the same bits.
std::string encode_evidence(const audit::GpuTotals& totals);

/// Decodes a BLOB written by encode_evidence(), or by gua before schema 9 ((number, 8 bytes)
/// entries), into the pools, profile, provenance, overlap and health of `totals` (all reset first;
/// its other members are left alone). Unknown field numbers are skipped; a truncated or malformed
/// tail is ignored; a BLOB written before schema 4 leaves the provenance all zero, one written
/// before the health totals leaves them zero (no energy known: "n/a").
void decode_evidence(std::string_view blob, audit::GpuTotals& totals);

/// Encodes the health totals of one identity on one card (same layout, its own field numbers).
std::string encode_identity_evidence(const audit::IdentityTotals& totals);

/// Decodes a BLOB written by encode_identity_evidence() (or before schema 9) into
/// `totals.health` (reset first); an empty BLOB (rows written before schema 8) leaves it zero.
void decode_identity_evidence(std::string_view blob, audit::IdentityTotals& totals);

/// The field numbers of a card BLOB whose stored value differs from what `recomputed` (the totals
/// of the same card and hour, recomputed from raw ticks) holds; empty when they agree. Fields
/// the BLOB lacks are not compared (a gua of an older schema wrote fewer).
std::vector<int> evidence_differences(std::string_view blob, const audit::GpuTotals& recomputed);

/// A card BLOB of any schema re-encoded as encode_evidence() writes it (the schema 9 upgrade).
std::string recode_evidence(std::string_view blob);

/// An identity BLOB of any schema re-encoded as encode_identity_evidence() writes it.
std::string recode_identity_evidence(std::string_view blob);

} // namespace gua::store
