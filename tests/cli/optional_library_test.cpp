// SPDX-License-Identifier: Apache-2.0
// libcurl4 and libmicrohttpd12 are only Recommends of the package: without them the real binary
// still runs, and the feature that needs one says in one line which package to install. The
// library is hidden by mounting an empty file over it in a private mount namespace (root only).
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <link.h>
#include <string>

namespace gua::optional_library_test { // named after the file: unique in a unity batch

/// The file the dynamic loader opens for `soname`, "" when it cannot.
std::string loaded_path(const std::string& soname) {
    void* handle = dlopen(soname.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (handle == nullptr) {
        return "";
    }
    link_map* map = nullptr;
    std::string path;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr) {
        path = map->l_name;
    }
    dlclose(handle);
    return path;
}

/// Runs gua with `args` while `library` reads as an empty file; exit code 125 when the mount
/// namespace cannot be made.
test::RunResult run_without(const std::string& library, const std::vector<std::string>& args,
                            const std::map<std::string, std::string>& env = {}) {
    std::vector<std::string> argv{
        "-m",
        "/bin/sh",
        "-c",
        "mount --bind /dev/null \"$(readlink -f \"$0\")\" 2>/dev/null || exit 125; exec \"$@\"",
        library,
        GUA_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run("/usr/bin/unshare", argv, env);
}

int lines(const std::string& text) {
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

TEST(OptionalLibrary, ReportFromPrometheusWithoutLibcurlNamesThePackage) {
    const std::string library = loaded_path("libcurl.so.4");
    if (library.empty() || !std::filesystem::exists("/usr/bin/unshare")) {
        GTEST_SKIP() << "libcurl.so.4 or unshare is not installed";
    }
    const test::RunResult r =
        run_without(library, {"report", "--prometheus", "http://127.0.0.1:1", "--since", "1h"});
    if (r.exit_code == 125) {
        GTEST_SKIP() << "cannot make a mount namespace here (needs root)";
    }
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind("gua: gua report --prometheus needs libcurl.so.4", 0), 0U) << r.err;
    EXPECT_NE(r.err.find("install the Debian package libcurl4"), std::string::npos) << r.err;
}

TEST(OptionalLibrary, DaemonListenWithoutLibmicrohttpdNamesThePackage) {
    const std::string library = loaded_path("libmicrohttpd.so.12");
    const std::string fake = std::string(GUA_FAKE_NVML_DIR) + "/libnvidia-ml.so.1";
    if (library.empty() || !std::filesystem::exists("/usr/bin/unshare") ||
        !std::filesystem::exists(fake)) {
        GTEST_SKIP() << "libmicrohttpd.so.12, unshare or the fake NVML library is missing";
    }
    test::TempDir dir;
    std::ofstream(dir.file("scenario.json")) << R"({"devices": [{"name": "NVIDIA L4"}]})";
    const test::RunResult r = run_without(
        library,
        {"daemon", "--db", dir.file("gua.db"), "--listen", "127.0.0.1:0", "--ticks", "1", "-q"},
        {{"GUA_NVML_LIBRARY", fake}, {"GUA_FAKE_NVML_SCENARIO", dir.file("scenario.json")}});
    if (r.exit_code == 125) {
        GTEST_SKIP() << "cannot make a mount namespace here (needs root)";
    }
    EXPECT_NE(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("gua daemon --listen needs libmicrohttpd.so.12"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("install the Debian package libmicrohttpd12"), std::string::npos) << r.err;
}

} // namespace gua::optional_library_test
