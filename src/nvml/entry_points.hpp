// SPDX-License-Identifier: Apache-2.0
// The NVML entry points gua binds: entry_points.def expanded into an id enum, a name table and
// each entry's C signature. This is the only place that expands the list.
#pragma once

#include "nvml/abi.hpp"

#include <array>
#include <cstddef>
#include <cstdint>

namespace gua::nvml {

/// Identifies one entry point (a function, whatever version of its name was bound).
enum class Entry : std::uint8_t {
#define GUA_NVML_ENTRY(id, need, signature, ...) id,
#include "nvml/entry_points.def"
#undef GUA_NVML_ENTRY
};

/// Whether gua refuses to run without an entry point, or only checks for its presence.
enum class Need : std::uint8_t { required, optional, probe };

/// One row of the entry-point list; unused name slots are nullptr.
struct EntryPoint {
    Entry id;
    Need need;
    std::array<const char*, 3> names; ///< newest first
};

/// Every entry point, in Entry order.
inline constexpr std::array k_entry_points = {
#define GUA_NVML_ENTRY(id, need, signature, ...) EntryPoint{Entry::id, Need::need, {__VA_ARGS__}},
#include "nvml/entry_points.def"
#undef GUA_NVML_ENTRY
};

/// Number of entry points.
inline constexpr std::size_t k_entry_count = k_entry_points.size();

/// Position of an entry in k_entry_points.
constexpr std::size_t entry_index(Entry e) {
    return static_cast<std::size_t>(e);
}

/// The C function type of an entry point (all of its name variants share it).
template <Entry E> struct EntrySignature;
#define GUA_NVML_ENTRY(id, need, signature, ...)                                                   \
    template <> struct EntrySignature<Entry::id> { using type = signature; };
#include "nvml/entry_points.def"
#undef GUA_NVML_ENTRY

} // namespace gua::nvml
