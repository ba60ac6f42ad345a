// SPDX-License-Identifier: Apache-2.0
// The Xid catalog: one row per code, in order, every row complete; the classes of the codes the
// reports lean on; a code the catalog lacks is "unknown", never a guess.
#include "faults/catalog.hpp"

#include <gtest/gtest.h>

#include <set>

namespace gua::faults {
namespace catalog_test { // named after the file: unique in a unity batch

TEST(XidCatalog, RowsAreUniqueAndComplete) {
    std::set<int> codes;
    for (const XidInfo& row : xid_catalog()) {
        EXPECT_TRUE(codes.insert(row.code).second) << row.code;
        EXPECT_FALSE(row.mnemonic.empty()) << row.code;
        EXPECT_FALSE(row.meaning.empty()) << row.code;
        EXPECT_FALSE(row.action.empty()) << row.code;
        EXPECT_EQ(xid_info(row.code).mnemonic, row.mnemonic);
    }
    EXPECT_GE(codes.size(), 40U);
}

TEST(XidCatalog, WhoseFaultForTheCodesThatMatter) {
    for (int code : {13, 31, 43, 68}) {
        EXPECT_EQ(xid_info(code).whose, FaultClass::application) << code;
    }
    for (int code : {48, 62, 63, 64, 79, 92, 94, 95, 140}) {
        EXPECT_EQ(xid_info(code).whose, FaultClass::hardware) << code;
    }
    for (int code : {74, 121, 144, 145, 149, 150}) {
        EXPECT_EQ(xid_info(code).whose, FaultClass::interconnect) << code;
    }
    for (int code : {119, 120, 109}) {
        EXPECT_EQ(xid_info(code).whose, FaultClass::driver) << code;
    }
    EXPECT_EQ(xid_info(45).whose, FaultClass::informational);
    EXPECT_EQ(xid_info(79).mnemonic, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS");
}

TEST(XidCatalog, AnUnlistedCodeIsUnknown) {
    const XidInfo info = xid_info(12345);
    EXPECT_EQ(info.code, 12345);
    EXPECT_EQ(info.whose, FaultClass::unknown);
    EXPECT_TRUE(info.mnemonic.empty());
    EXPECT_EQ(to_string(info.whose), "unknown");
    EXPECT_EQ(xid_info(999).whose, FaultClass::unknown) << "NVML's unknown Xid";
}

} // namespace catalog_test
} // namespace gua::faults
