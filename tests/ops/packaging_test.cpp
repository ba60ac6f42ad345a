// The Debian package (built with cpack from this build tree into a temporary directory), the
// systemd unit (`systemd-analyze verify`) and the man page. Labelled "packaging" in ctest.
#include "ops/harness.hpp"

#include <gtest/gtest.h>

#include <cstdio>

namespace gua::ops::testing {
namespace {

bool have(const std::string& program) {
    return std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0;
}

// Runs a shell command and returns its stdout and exit code.
std::pair<int, std::string> shell(const std::string& command) {
    std::string out;
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) {
        return {-1, ""};
    }
    char buffer[4096];
    while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) {
        out.append(buffer, n);
    }
    const int status = ::pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

class Packaging : public OpsTest {
  protected:
    static void SetUpTestSuite() {
        if (!have("cpack") || !have("dpkg-deb") || !have("dpkg-shlibdeps")) {
            return;
        }
        s_dir = fs::temp_directory_path() / ("gua-package-" + std::to_string(::getpid()));
        fs::create_directories(s_dir);
        const auto [code, out] =
            shell("cd '" + s_dir.string() + "' && cpack -G DEB --config '" +
                  std::string(GUA_BUILD_DIR) + "/CPackConfig.cmake' -B '" + s_dir.string() + "'");
        s_cpack_output = out;
        for (const fs::directory_entry& e : fs::directory_iterator(s_dir)) {
            if (e.path().extension() == ".deb") {
                s_deb = e.path();
            }
        }
    }
    static void TearDownTestSuite() {
        std::error_code ec;
        fs::remove_all(s_dir, ec);
    }
    void SetUp() override {
        OpsTest::SetUp();
        if (s_dir.empty()) {
            GTEST_SKIP() << "cpack, dpkg-deb or dpkg-shlibdeps (dpkg-dev) is not installed";
        }
        ASSERT_FALSE(s_deb.empty()) << s_cpack_output;
    }

    static inline fs::path s_dir;
    static inline fs::path s_deb;
    static inline std::string s_cpack_output;
};

TEST_F(Packaging, DebHoldsBinaryAliasUnitConffileAndManPage) {
    const auto [code, listing] = shell("dpkg-deb -c '" + s_deb.string() + "'");
    ASSERT_EQ(code, 0) << listing;
    for (const char* entry : {"./usr/bin/gua\n", "./usr/bin/gpu-usage-audit -> gua\n",
                              "./lib/systemd/system/gua.service\n", "./etc/gua/gua.toml\n",
                              "./usr/share/man/man1/gua.1.gz\n",
                              "./usr/share/man/man1/gpu-usage-audit.1.gz -> gua.1.gz\n"}) {
        EXPECT_TRUE(contains(listing, entry)) << entry << "\n" << listing;
    }
    EXPECT_EQ(s_deb.filename().string().rfind("gua_", 0), 0u) << s_deb;
}

TEST_F(Packaging, ControlDataHasConffilesDependsAndMaintainerScripts) {
    const auto [code, info] = shell("dpkg-deb -I '" + s_deb.string() + "'");
    ASSERT_EQ(code, 0) << info;
    for (const char* part : {"Package: gua\n", "Section: admin\n", "conffiles", "postinst", "prerm",
                             "postrm", "Maintainer: "}) {
        EXPECT_TRUE(contains(info, part)) << part << "\n" << info;
    }
    const std::string depends = shell("dpkg-deb -f '" + s_deb.string() + "' Depends").second;
    EXPECT_TRUE(contains(depends, "adduser")) << depends;
    EXPECT_TRUE(contains(depends, "libsqlite3-0")) << depends;
    // dlopen'ed by --prometheus and --listen, declared by hand (dpkg-shlibdeps cannot see them)
    EXPECT_TRUE(contains(depends, "libcurl4")) << depends;
    EXPECT_TRUE(contains(depends, "libmicrohttpd12")) << depends;

    const fs::path control = root() / "control";
    ASSERT_EQ(shell("dpkg-deb -e '" + s_deb.string() + "' '" + control.string() + "'").first, 0);
    EXPECT_EQ(read_text(control / "conffiles"), "/etc/gua/gua.toml\n");
    for (const char* script : {"postinst", "prerm", "postrm"}) {
        EXPECT_EQ(fs::status(control / script).permissions() & fs::perms::owner_exec,
                  fs::perms::owner_exec)
            << script;
        EXPECT_EQ(shell("sh -n '" + (control / script).string() + "'").first, 0) << script;
    }
    const std::string postinst = read_text(control / "postinst");
    EXPECT_TRUE(contains(postinst, "adduser --quiet --system --group")) << postinst;
    const std::string postrm = read_text(control / "postrm");
    const std::size_t purge = postrm.find("\"$1\" = \"purge\"");
    ASSERT_NE(purge, std::string::npos) << postrm;
    EXPECT_GT(postrm.find("rm -rf /var/lib/gua"), purge) << "only purge deletes the database";
    EXPECT_TRUE(contains(read_text(control / "prerm"), "gua uninstall")) << "remove keeps the data";
}

TEST_F(Packaging, PackagedFilesMatchTheSources) {
    const fs::path tree = root() / "tree";
    ASSERT_EQ(shell("dpkg-deb -x '" + s_deb.string() + "' '" + tree.string() + "'").first, 0);
    EXPECT_EQ(read_text(tree / "lib/systemd/system/gua.service"),
              read_text(fs::path(GUA_SOURCE_DIR) / "packaging/gua.service"));
    EXPECT_EQ(read_text(tree / "etc/gua/gua.toml"),
              read_text(fs::path(GUA_SOURCE_DIR) / "packaging/gua.toml"));
    const GuaRun version = run_gua({"version"});
    EXPECT_EQ(shell("'" + (tree / "usr/bin/gua").string() + "' version").second, version.out);
}

} // namespace

TEST(PackagingUnit, SystemdAnalyzeVerifyPasses) {
    if (!have("systemd-analyze")) {
        GTEST_SKIP() << "systemd-analyze is not installed";
    }
    // verify checks that ExecStart= exists, so the unit is checked with this build's binary.
    std::string pattern = (fs::temp_directory_path() / "gua-unit-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    const fs::path unit = fs::path(pattern) / "gua.service";
    std::string text = read_text(fs::path(GUA_SOURCE_DIR) / "packaging/gua.service");
    const std::size_t at = text.find("ExecStart=/usr/bin/gua ");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 23, "ExecStart=" + std::string(GUA_BINARY) + " ");
    std::ofstream(unit) << text;
    const auto [code, out] = shell("systemd-analyze verify --man=no '" + unit.string() + "'");
    EXPECT_EQ(code, 0) << out;
    EXPECT_EQ(out, "") << "systemd-analyze verify printed warnings";
    fs::remove_all(pattern);
}

TEST(PackagingUnit, ManPageRendersWithoutWarnings) {
    if (!have("groff")) {
        GTEST_SKIP() << "groff is not installed";
    }
    const auto [code, out] =
        shell("groff -man -ww -z -K utf8 '" + std::string(GUA_SOURCE_DIR) + "/packaging/gua.1'");
    EXPECT_EQ(code, 0);
    EXPECT_EQ(out, "");
}

} // namespace gua::ops::testing
