// SPDX-License-Identifier: Apache-2.0
// The Xid catalog (xid_catalog.def): what a driver fault code means, whose fault it usually is,
// and what to do about it.
#pragma once

#include <span>
#include <string_view>

namespace gua::faults {

/// Whose fault an Xid usually is (gua's summary of NVIDIA's catalog; docs/faults.md).
enum class FaultClass { application, hardware, driver, interconnect, informational, unknown };

/// "application", "hardware", "driver", "interconnect", "informational" or "unknown".
std::string_view to_string(FaultClass c);

/// The code gua stores (in the fault table's xid column) for a GPU that the PCI bus lists but
/// the driver cannot open: not an Xid of NVIDIA's, never exported as one (docs/faults.md).
inline constexpr int k_gpu_missing_code = -1;

/// One catalog row.
struct XidInfo {
    int code = 0;
    std::string_view mnemonic;
    std::string_view meaning;
    FaultClass whose = FaultClass::unknown;
    std::string_view action;
};

/// The row of `code`; a code the catalog does not list gets a row saying so (class unknown).
XidInfo xid_info(int code);

/// Every row, by code.
std::span<const XidInfo> xid_catalog();

} // namespace gua::faults
