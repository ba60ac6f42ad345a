// SPDX-License-Identifier: Apache-2.0
// The Xid catalog expanded from xid_catalog.def.
#include "faults/catalog.hpp"

#include <algorithm>
#include <array>

namespace gua::faults {

namespace {

constexpr std::array k_catalog = {
#define GUA_XID(code, mnemonic, meaning, whose, action)                                            \
    XidInfo{code, mnemonic, meaning, FaultClass::whose, action},
#include "faults/xid_catalog.def"
#undef GUA_XID
};

static_assert(std::is_sorted(k_catalog.begin(), k_catalog.end(),
                             [](const XidInfo& a, const XidInfo& b) { return a.code < b.code; }));

} // namespace

std::string_view to_string(FaultClass c) {
    switch (c) {
    case FaultClass::application:
        return "application";
    case FaultClass::hardware:
        return "hardware";
    case FaultClass::driver:
        return "driver";
    case FaultClass::interconnect:
        return "interconnect";
    case FaultClass::informational:
        return "informational";
    case FaultClass::unknown:
        break;
    }
    return "unknown";
}

XidInfo xid_info(int code) {
    const auto it = std::lower_bound(k_catalog.begin(), k_catalog.end(), code,
                                     [](const XidInfo& row, int c) { return row.code < c; });
    if (it != k_catalog.end() && it->code == code) {
        return *it;
    }
    return XidInfo{code, "", "not in gua's catalog", FaultClass::unknown,
                   "look the code up in NVIDIA's Xid catalog; read the kernel log line"};
}

std::span<const XidInfo> xid_catalog() {
    return k_catalog;
}

} // namespace gua::faults
