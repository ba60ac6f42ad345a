// The recommender's per-card evidence (waste pools and card profile) in rollup rows: a BLOB of
// (field number, 8-byte value) pairs for the non-zero fields only, so an idle card costs nothing.
#pragma once

#include "audit/pools.hpp"

#include <string>
#include <string_view>

namespace gua::store {

/// Encodes the pools and the profile of one card (little-endian, zero fields left out).
std::string encode_evidence(const audit::PoolTimes& pools, const audit::CardProfile& profile);

/// Decodes a BLOB written by encode_evidence() into `pools` and `profile` (both reset first).
/// Unknown field numbers and a truncated tail are ignored.
void decode_evidence(std::string_view blob, audit::PoolTimes& pools, audit::CardProfile& profile);

} // namespace gua::store
