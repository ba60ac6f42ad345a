// SPDX-License-Identifier: Apache-2.0
// SharedLibrary: the optional libraries are opened on demand, once, with one-line errors.
#include "core/fatal.hpp"
#include "core/shared_library.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace gua {
namespace {

TEST(SharedLibrary, MissingLibraryNamesTheFeatureAndThePackage) {
    try {
        SharedLibrary::open("libgua-does-not-exist.so.7", "libgua-nothing7", "gua frobnicate");
        FAIL() << "opened a library that does not exist";
    } catch (const Fatal& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("gua frobnicate needs libgua-does-not-exist.so.7"), std::string::npos)
            << m;
        EXPECT_NE(m.find("install the Debian package libgua-nothing7"), std::string::npos) << m;
        EXPECT_EQ(m.find('\n'), std::string::npos) << "one line";
    }
}

TEST(SharedLibrary, OpensOnceAndBindsRealFunctions) {
    const SharedLibrary& a = SharedLibrary::open("libc.so.6", "libc6", "test");
    const SharedLibrary& b = SharedLibrary::open("libc.so.6", "libc6", "test");
    EXPECT_EQ(&a, &b);
    int (*abs_fn)(int) = nullptr;
    a.bind(abs_fn, "abs");
    ASSERT_NE(abs_fn, nullptr);
    EXPECT_EQ(abs_fn(-42), 42);
    EXPECT_THROW(a.address("gua_no_such_symbol"), Fatal);
}

} // namespace
} // namespace gua
