// SPDX-License-Identifier: Apache-2.0
// Splitting /proc/<pid>/cmdline and finding Jupyter kernel ids in its many launcher forms.
#include "identity/cmdline.hpp"

#include <gtest/gtest.h>

namespace gua::identity {
namespace {

using Argv = std::vector<std::string>;
constexpr const char* k_id = "1a2b3c4d-aaaa-bbbb-cccc-1234567890ab";

std::string file(const std::string& dir = "/home/ann/.local/share/jupyter/runtime") {
    return dir + "/kernel-" + k_id + ".json";
}

TEST(Cmdline, DisplayShortensArgv0QuotesAndEscapes) {
    EXPECT_EQ(display_cmdline({"/usr/bin/python3", "train.py", "--lr", "3e-4"}),
              "python3 train.py --lr 3e-4");
    EXPECT_EQ(display_cmdline({"python", "my script.py", ""}), "python 'my script.py' ''");
    EXPECT_EQ(display_cmdline({"sh", "-c", "echo it's"}), "sh -c \"echo it's\"");
    EXPECT_EQ(display_cmdline({"evil", "\x1b]0;title\x07"}), "evil \\x1b]0;title\\x07");
    EXPECT_EQ(display_cmdline({"/"}), "/") << "a bare slash stays";
    EXPECT_EQ(display_cmdline({}), "");
}

TEST(Cmdline, SplitsNulSeparated) {
    using namespace std::string_literals;
    EXPECT_EQ(split_cmdline("python3\0-m\0ipykernel_launcher\0"s),
              (Argv{"python3", "-m", "ipykernel_launcher"}));
    EXPECT_EQ(split_cmdline("a\0\0b"s), (Argv{"a", "", "b"}));
    EXPECT_EQ(split_cmdline("single"s), (Argv{"single"}));
    EXPECT_EQ(split_cmdline(""s), Argv{});
    EXPECT_EQ(split_cmdline("\0"s), (Argv{}));
    EXPECT_EQ(split_cmdline("with space\0x\0"s), (Argv{"with space", "x"}));
}

TEST(Cmdline, JupyterLauncherForms) {
    const std::vector<Argv> kernels = {
        {"/usr/bin/python3", "-m", "ipykernel_launcher", "-f", file()},
        {"python", "-m", "ipykernel", "-f", file()},
        {"python", "-mipykernel_launcher", "-f", file()},
        {"/opt/conda/bin/python", "/opt/conda/lib/python3.11/site-packages/ipykernel_launcher.py",
         "-f", file("/tmp")},
        {"python", "-m", "ipykernel_launcher", "--f=" + file()},
        {"python", "-m", "ipykernel_launcher", "-f=" + file()},
        {"python", "-m", "ipykernel_launcher", "--ip=127.0.0.1", "--stdin=9003", "--control=9001",
         "--hb=9000", "--f=" + file("/run/user/1000/jupyter")},
        {"/usr/local/bin/jupyter-kernel", "--KernelManager.connection_file=" + file()},
        {"python3", "-c", "import time; time.sleep(30)", "-m", "ipykernel_launcher", "-f",
         file("/tmp/x")},
        {"R", "--slave", "-e", "IRkernel::main()", "--args", file()},
        {"xpython", "-f", file()},
        {"julia", "-i", "/home/ann/.julia/packages/IJulia/abc/src/kernel.jl", file()},
    };
    for (const Argv& argv : kernels) {
        EXPECT_EQ(jupyter_kernel_id(argv), k_id) << ::testing::PrintToString(argv);
    }
}

TEST(Cmdline, OtherKernelIdShapes) {
    EXPECT_EQ(jupyter_kernel_id({"python", "-m", "ipykernel_launcher",
                                 "--f=/x/kernel-v2-"
                                 "4077QrXb8yZ.json"}),
              "v2-4077QrXb8yZ");
    EXPECT_EQ(jupyter_kernel_id({"python", "-m", "ipykernel_launcher", "-f", "kernel-12345.json"}),
              "12345");
}

TEST(Cmdline, NotAKernel) {
    const std::vector<Argv> others = {
        {},
        {"python3", "train.py", "--epochs", "3"},
        {"cat", file()},                        // the file alone is no kernel
        {"python", "-m", "ipykernel_launcher"}, // a launcher without its file
        {"python", "-m", "ipykernel_launcher", "-f", "/tmp/kernel-.json"},
        {"python", "-m", "ipykernel_launcher", "-f", "/tmp/kernel-abc.txt"},
        {"python", "-m", "ipykernel_launcher", "-f", "/tmp/kernel-a/b.json"},
        {"python", "-m", "ipykernel_launcher", "-f", "/tmp/mykernel-abc.json"},
        {"python", "-m", "ipykernel_launcher", "-f", "/tmp/kernel-a b.json"},
        {"python", "-m", "ipykernel_launcher", "--log", "/tmp/kernel-abc.json.log"},
        {"vim", "/home/ann/.local/share/jupyter/runtime/kernel-abc.json"},
    };
    for (const Argv& argv : others) {
        EXPECT_EQ(jupyter_kernel_id(argv), "") << ::testing::PrintToString(argv);
    }
}

} // namespace
} // namespace gua::identity
