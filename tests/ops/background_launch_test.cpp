// SPDX-License-Identifier: Apache-2.0
// launch_background's failures before the fork: a clear message, and no descriptor left open.
#include "ops/background.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace gua::ops {
namespace background_launch_test { // named after the file: unique in a unity batch

/// The descriptors this process has open now.
std::size_t open_descriptors() {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& entry :
         std::filesystem::directory_iterator("/proc/self/fd")) {
        ++n;
    }
    return n;
}

TEST(BackgroundLaunch, UnopenableLogFileFailsWithoutLeakingDescriptors) {
    BackgroundLaunch launch;
    launch.argv = {"/bin/true"};
    launch.log_file = "/nonexistent-gua-dir/gua.log"; // its directory does not exist
    launch.pid_file = "/nonexistent-gua-dir/gua.pid";
    const std::size_t before = open_descriptors();
    for (int i = 0; i < 20; ++i) { // a leak of one descriptor per call would show as 20
        const LaunchResult r = launch_background(launch);
        EXPECT_EQ(r.status, LaunchResult::Status::failed);
        EXPECT_NE(r.message.find("cannot open /nonexistent-gua-dir/gua.log"), std::string::npos)
            << r.message;
    }
    EXPECT_EQ(open_descriptors(), before);
}

} // namespace background_launch_test
} // namespace gua::ops
