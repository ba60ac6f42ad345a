// SPDX-License-Identifier: Apache-2.0
// Which allocation sources a host has: [allocations] in gua.toml and `gua daemon
// --allocation-dir`; the factory that builds them.
#pragma once

#include "alloc/source.hpp"
#include "core/result.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gua::alloc {

/// The configured sources; empty (no source) by default, and then gua behaves as without
/// allocations.
struct Settings {
    std::vector<std::string> mapping_dirs; ///< [allocations] mapping_dir, --allocation-dir
    std::string kubelet_socket;            ///< [allocations] kubelet_socket; empty: none

    bool any() const { return !mapping_dirs.empty() || !kubelet_socket.empty(); }
    friend bool operator==(const Settings&, const Settings&) = default;
};

/// Checks one mapping directory or socket path: absolute, no NUL or newline, no "." or ".."
/// component. The error says what is wrong, for `what` (e.g. "--allocation-dir").
Result<void> validate_source_path(std::string_view what, std::string_view path);

/// Builds the sources `settings` names (each starts reading at once), combined into one; nullptr
/// when none is configured. A source that cannot be read yet is built anyway: it answers
/// "unknown" until it can be read.
std::unique_ptr<AllocationSource> make_allocation_source(const Settings& settings);

} // namespace gua::alloc
