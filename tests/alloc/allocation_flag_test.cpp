// SPDX-License-Identifier: Apache-2.0
// `gua daemon --allocation-dir` and [allocations] on the real binary: bad paths are usage errors
// (one line, exit 2) and a kubelet socket without the client module stops the daemon with one line
// naming the module, before NVML is opened or a database is created.
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace gua::alloc {
namespace allocation_flag_test {

std::size_t lines(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(AllocationFlag, RelativeOrDottedDirectoriesAreUsageErrors) {
    test::TempDir dir;
    for (const std::string bad : {"run/jobs", "/run/../jobs", ""}) {
        const test::RunResult r =
            test::run_gua({"daemon", "--db", dir.file("gua.db"), "--allocation-dir",
                           "/run/gua/jobs", "--allocation-dir", bad, "--ticks", "1"});
        EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
        EXPECT_TRUE(r.err.starts_with("gua: --allocation-dir: ")) << r.err;
        EXPECT_EQ(lines(r.err), 1U) << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir.file("gua.db")));
    }
}

TEST(AllocationFlag, AKubeletSocketWithoutTheClientModuleIsOneLine) {
    test::TempDir dir;
    std::ofstream(dir.file("gua.toml"))
        << "[allocations]\nkubelet_socket = \"" << dir.file("kubelet.sock") << "\"\n";
    const std::string module = dir.file("nowhere/gua-kubelet.so");
    const test::RunResult r = test::run_gua(
        {"daemon", "--db", dir.file("gua.db"), "--config", dir.file("gua.toml"), "--ticks", "1"},
        {{"GUA_KUBELET_MODULE", module}});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_TRUE(r.err.starts_with("gua: [allocations] kubelet_socket needs " + module)) << r.err;
    EXPECT_EQ(lines(r.err), 1U) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("gua.db")));
}

} // namespace allocation_flag_test
} // namespace gua::alloc
