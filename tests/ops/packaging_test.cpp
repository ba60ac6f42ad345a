// SPDX-License-Identifier: Apache-2.0
// The Debian packages gua and gua-kubelet (built with cpack from this build tree, once per build,
// into <build>/packaging-test), lintian's verdict on them, an install/remove/purge in a scratch
// root, the kubelet module found where the packages put it, the systemd unit
// (`systemd-analyze verify`), the man page and the default configuration.
// The tests that need the .debs are labelled "packaging" in ctest.
#include "alloc/fake_kubelet.hpp"
#include "ops/harness.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <sstream>
#include <sys/file.h>

namespace gua::ops::testing {
namespace {

bool have(const std::string& program) {
    return std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0;
}

// Runs a shell command and returns its exit code and its stdout and stderr.
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

std::string quoted(const fs::path& p) {
    return "'" + p.string() + "'";
}

/// The newest modification time among `path` and, for a directory, everything below it.
fs::file_time_type newest(const fs::path& path) {
    std::error_code ec;
    fs::file_time_type t = fs::last_write_time(path, ec);
    if (fs::is_directory(path, ec)) {
        for (const fs::directory_entry& e : fs::recursive_directory_iterator(path, ec)) {
            t = std::max(t, e.last_write_time(ec));
        }
    }
    return t;
}

/// `dpkg-deb -c` of `deb` as path (with " -> target" for links) → mode.
std::map<std::string, std::string> modes_of(const fs::path& deb) {
    std::map<std::string, std::string> mode_of;
    std::istringstream in(shell("dpkg-deb -c " + quoted(deb)).second);
    std::string line;
    while (std::getline(in, line)) {
        // `dpkg-deb -c` lines: mode owner/group size date time path [-> target]
        std::istringstream fields(line);
        std::string mode, owner, size, date, time, path;
        fields >> mode >> owner >> size >> date >> time >> path;
        EXPECT_EQ(owner, "root/root") << line;
        std::string rest;
        std::getline(fields, rest);
        mode_of[path + rest] = mode;
    }
    return mode_of;
}

class Packaging : public OpsTest {
  protected:
    /// Builds the .deb, or reuses the one an earlier test of this build made when nothing it is
    /// made of changed since; a lock keeps parallel tests from building it twice at once.
    static void SetUpTestSuite() {
        if (!have("cpack") || !have("dpkg-deb") || !have("dpkg-shlibdeps")) {
            return;
        }
        const fs::path build = GUA_BUILD_DIR;
        s_dir = build / "packaging-test";
        fs::create_directories(s_dir);
        const int lock =
            ::open((build / "packaging-test.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        ::flock(lock, LOCK_EX);
        s_deb = find_deb("gua_");
        s_kubelet_deb = find_deb("gua-kubelet_");
        const fs::path source = GUA_SOURCE_DIR;
        const fs::file_time_type inputs =
            std::max({newest(GUA_BINARY), newest(fs::path(GUA_BINARY).parent_path() / k_module),
                      newest(source / "packaging"), newest(source / "cmake"),
                      newest(build / "CPackConfig.cmake"), newest(build / "packaging")});
        if (s_deb.empty() || s_kubelet_deb.empty() || fs::last_write_time(s_deb) < inputs ||
            fs::last_write_time(s_kubelet_deb) < inputs) {
            fs::remove_all(s_dir);
            fs::create_directories(s_dir);
            const auto [code, out] =
                shell("cd " + quoted(s_dir) + " && cpack -G DEB --config " +
                      quoted(build / "CPackConfig.cmake") + " -B " + quoted(s_dir));
            s_cpack_output = out;
            s_deb = find_deb("gua_");
            s_kubelet_deb = find_deb("gua-kubelet_");
        }
        ::flock(lock, LOCK_UN);
        ::close(lock);
    }
    /// The .deb whose name starts with `prefix` ("gua_", "gua-kubelet_").
    static fs::path find_deb(const std::string& prefix) {
        for (const fs::directory_entry& e : fs::directory_iterator(s_dir)) {
            if (e.path().extension() == ".deb" &&
                e.path().filename().string().rfind(prefix, 0) == 0) {
                return e.path();
            }
        }
        return {};
    }
    void SetUp() override {
        OpsTest::SetUp();
        if (s_dir.empty()) {
            GTEST_SKIP() << "cpack, dpkg-deb or dpkg-shlibdeps (dpkg-dev) is not installed";
        }
        ASSERT_FALSE(s_deb.empty()) << s_cpack_output;
        ASSERT_FALSE(s_kubelet_deb.empty()) << s_cpack_output;
    }

    /// The package's files unpacked into <root>/tree.
    fs::path unpacked(const fs::path& deb = s_deb) const {
        const fs::path tree = root() / "tree";
        EXPECT_EQ(shell("dpkg-deb -x " + quoted(deb) + " " + quoted(tree)).first, 0);
        return tree;
    }

    static constexpr const char* k_module = "gua-kubelet.so";
    static inline fs::path s_dir;
    static inline fs::path s_deb;
    static inline fs::path s_kubelet_deb;
    static inline std::string s_cpack_output;
};

TEST_F(Packaging, DebHoldsBinaryUnitConfigManPageDocsAndCompletion) {
    const std::map<std::string, std::string> mode_of = modes_of(s_deb);
    const std::string listing = shell("dpkg-deb -c " + quoted(s_deb)).second;
    const std::map<std::string, std::string> expected{
        {"./usr/bin/gua", "-rwxr-xr-x"},
        {"./usr/bin/gpu-usage-audit -> gua", "lrwxrwxrwx"},
        {"./lib/systemd/system/gua.service", "-rw-r--r--"},
        {"./lib/systemd/system/gua-digest.service", "-rw-r--r--"},
        {"./lib/systemd/system/gua-digest.timer", "-rw-r--r--"},
        {"./etc/gua/gua.toml", "-rw-r--r--"},
        {"./usr/share/man/man1/gua.1.gz", "-rw-r--r--"},
        {"./usr/share/man/man1/gpu-usage-audit.1.gz -> gua.1.gz", "lrwxrwxrwx"},
        {"./usr/share/doc/gua/copyright", "-rw-r--r--"},
        {"./usr/share/doc/gua/changelog.gz", "-rw-r--r--"},
        {"./usr/share/doc/gua/examples/gua.toml.example", "-rw-r--r--"},
        {"./usr/share/doc/gua/examples/gua-rules.yml", "-rw-r--r--"},
        {"./usr/share/doc/gua/examples/gua-alerts.yml", "-rw-r--r--"},
        {"./usr/share/gua/grafana/gua.json", "-rw-r--r--"},
        {"./usr/share/bash-completion/completions/gua", "-rw-r--r--"},
        {"./usr/share/bash-completion/completions/gpu-usage-audit -> gua", "lrwxrwxrwx"},
        {"./usr/share/zsh/vendor-completions/_gua", "-rw-r--r--"},
        {"./usr/share/fish/vendor_completions.d/gua.fish", "-rw-r--r--"},
        {"./usr/share/fish/vendor_completions.d/gpu-usage-audit.fish -> gua.fish", "lrwxrwxrwx"},
    };
    for (const auto& [path, mode] : expected) {
        const auto it = mode_of.find(path);
        ASSERT_NE(it, mode_of.end()) << path << "\n" << listing;
        EXPECT_EQ(it->second, mode) << path;
    }
    EXPECT_EQ(s_deb.filename().string().rfind("gua_", 0), 0u) << s_deb;
    for (const auto& [path, mode] : mode_of) {
        EXPECT_FALSE(contains(path, k_module)) << "gua carries the kubelet module: " << path;
    }
}

// gua-kubelet: the module in <libdir>/gua (where the packaged gua looks: see
// InstalledGuaLoadsTheModuleOnlyFromGuaKubelet) and its own copyright and changelog.
TEST_F(Packaging, KubeletDebHoldsTheModuleAndItsOwnDocs) {
    std::map<std::string, std::string> files; // the entries that are not directories
    for (const auto& [path, mode] : modes_of(s_kubelet_deb)) {
        if (mode.front() != 'd') {
            files[path] = mode;
        }
    }
    ASSERT_EQ(files.size(), 3u) << ::testing::PrintToString(files);
    const auto module = files.begin(); // "./usr/lib/…" sorts first
    EXPECT_EQ(module->first.rfind("./usr/lib/", 0), 0u) << module->first;
    EXPECT_TRUE(module->first.ends_with(std::string("/gua/") + k_module)) << module->first;
    EXPECT_EQ(module->second, "-rw-r--r--");
    EXPECT_EQ(files["./usr/share/doc/gua-kubelet/copyright"], "-rw-r--r--");
    EXPECT_EQ(files["./usr/share/doc/gua-kubelet/changelog.gz"], "-rw-r--r--");
    EXPECT_EQ(s_kubelet_deb.filename().string(),
              "gua-kubelet_" + s_deb.filename().string().substr(4)); // same version and arch
    const fs::path tree = unpacked(s_kubelet_deb);
    const fs::path source = GUA_SOURCE_DIR;
    EXPECT_EQ(read_text(tree / "usr/share/doc/gua-kubelet/copyright"),
              read_text(source / "packaging/debian/gua-kubelet.copyright"));
    EXPECT_EQ(shell("gzip -dc " + quoted(tree / "usr/share/doc/gua-kubelet/changelog.gz")).second,
              read_text(source / "packaging/debian/changelog"));
    // The module gua loads: its one entry point, and no undefined symbol of gua's.
    const std::string symbols =
        shell("nm -D --defined-only " + quoted(tree / module->first.substr(2))).second;
    EXPECT_TRUE(contains(symbols, " T gua_kubelet_make_client\n")) << symbols;
}

// gua depends on no gRPC or protobuf library; gua-kubelet on this very gua and on them (found by
// dpkg-shlibdeps), with no maintainer scripts of its own.
TEST_F(Packaging, KubeletDebDependsOnThisGuaAndGrpcWhileGuaDoesNot) {
    const auto field = [](const fs::path& deb, const std::string& name) {
        return shell("dpkg-deb -f " + quoted(deb) + " " + name).second;
    };
    const std::string gua_depends = field(s_deb, "Depends");
    for (const char* library : {"grpc", "protobuf", "absl", "gua-kubelet"}) {
        EXPECT_FALSE(contains(gua_depends, library)) << library << " in " << gua_depends;
    }
    EXPECT_FALSE(contains(field(s_deb, "Recommends"), "gua-kubelet"));
    const std::string version = field(s_deb, "Version");
    EXPECT_EQ(field(s_kubelet_deb, "Version"), version);
    EXPECT_EQ(field(s_kubelet_deb, "Package"), "gua-kubelet\n");
    EXPECT_EQ(field(s_kubelet_deb, "Section"), "admin\n");
    EXPECT_EQ(field(s_kubelet_deb, "Architecture"), field(s_deb, "Architecture"));
    const std::string depends = field(s_kubelet_deb, "Depends");
    EXPECT_TRUE(contains(depends, "gua (= " + version.substr(0, version.size() - 1) + ")"))
        << depends;
    for (const char* library : {"libgrpc++1", "libprotobuf", "libc6", "libstdc++6"}) {
        EXPECT_TRUE(contains(depends, library)) << library << " not in " << depends;
    }
    EXPECT_EQ(field(s_kubelet_deb, "Recommends"), "\n"); // none
    const std::string description = field(s_kubelet_deb, "Description");
    EXPECT_EQ(description.substr(0, description.find('\n')),
              "GPU usage audit: Kubernetes pod allocations for gua");
    EXPECT_TRUE(contains(field(s_deb, "Description"),
                         "GPU usage audit: active, idle-held and truly idle GPU time\n"));
    const fs::path control = root() / "kubelet-control";
    ASSERT_EQ(shell("dpkg-deb -e " + quoted(s_kubelet_deb) + " " + quoted(control)).first, 0);
    std::set<std::string> members;
    for (const fs::directory_entry& e : fs::directory_iterator(control)) {
        members.insert(e.path().filename().string());
    }
    EXPECT_EQ(members, (std::set<std::string>{"control", "md5sums"}));
}

TEST_F(Packaging, ControlDataHasConffilesRelationsAndMaintainerScripts) {
    const auto [code, info] = shell("dpkg-deb -I " + quoted(s_deb));
    ASSERT_EQ(code, 0) << info;
    for (const char* part : {"Package: gua\n", "Section: admin\n", "conffiles", "postinst", "prerm",
                             "postrm", "Maintainer: "}) {
        EXPECT_TRUE(contains(info, part)) << part << "\n" << info;
    }
    const std::string depends = shell("dpkg-deb -f " + quoted(s_deb) + " Depends").second;
    EXPECT_TRUE(contains(depends, "adduser")) << depends;
    EXPECT_TRUE(contains(depends, "libsqlite3-0")) << depends;
    // dlopen'ed only by --prometheus and --listen: recommended, not required
    EXPECT_FALSE(contains(depends, "libcurl")) << depends;
    EXPECT_FALSE(contains(depends, "libmicrohttpd")) << depends;
    const std::string recommends = shell("dpkg-deb -f " + quoted(s_deb) + " Recommends").second;
    EXPECT_EQ(recommends, "libcurl4, libmicrohttpd12\n");

    const fs::path control = root() / "control";
    ASSERT_EQ(shell("dpkg-deb -e " + quoted(s_deb) + " " + quoted(control)).first, 0);
    EXPECT_EQ(read_text(control / "conffiles"), "/etc/gua/gua.toml\n");
    for (const char* script : {"postinst", "prerm", "postrm"}) {
        EXPECT_EQ(fs::status(control / script).permissions() & fs::perms::owner_exec,
                  fs::perms::owner_exec)
            << script;
        EXPECT_EQ(shell("sh -n " + quoted(control / script)).first, 0) << script;
        EXPECT_FALSE(contains(read_text(control / script), "/usr/bin/"))
            << script << " calls a program by path";
    }
    const std::string postinst = read_text(control / "postinst");
    EXPECT_TRUE(contains(postinst, "adduser --quiet --system --group")) << postinst;
    const std::string postrm = read_text(control / "postrm");
    const std::size_t purge = postrm.find("\"$1\" = \"purge\"");
    ASSERT_NE(purge, std::string::npos) << postrm;
    EXPECT_GT(postrm.find("rm -rf /var/lib/gua"), purge) << "only purge deletes the database";
    EXPECT_TRUE(contains(read_text(control / "prerm"), "gua uninstall --package-removal"))
        << "remove keeps the data and names apt, not the binary being removed";
}

TEST_F(Packaging, PackagedFilesMatchTheSourcesAndTheBinary) {
    const fs::path tree = unpacked();
    const fs::path source = GUA_SOURCE_DIR;
    for (const auto& [installed, original] : std::vector<std::pair<std::string, std::string>>{
             {"lib/systemd/system/gua.service", "packaging/gua.service"},
             {"lib/systemd/system/gua-digest.service", "packaging/gua-digest.service"},
             {"lib/systemd/system/gua-digest.timer", "packaging/gua-digest.timer"},
             {"etc/gua/gua.toml", "packaging/gua.toml"},
             {"usr/share/doc/gua/copyright", "packaging/debian/copyright"},
             {"usr/share/doc/gua/examples/gua.toml.example", "packaging/gua.toml.example"},
             {"usr/share/doc/gua/examples/gua-rules.yml", "packaging/gua-rules.yml"},
             {"usr/share/doc/gua/examples/gua-alerts.yml", "packaging/gua-alerts.yml"},
             {"usr/share/gua/grafana/gua.json", "packaging/grafana/gua.json"}}) {
        EXPECT_EQ(read_text(tree / installed), read_text(source / original)) << installed;
    }
    EXPECT_EQ(shell("gzip -dc " + quoted(tree / "usr/share/doc/gua/changelog.gz")).second,
              read_text(source / "packaging/debian/changelog"));
    const std::string binary = quoted(tree / "usr/bin/gua");
    EXPECT_EQ(shell(binary + " version").second, run_gua({"version"}).out);
    for (const auto& [shell_name, file] : std::vector<std::pair<std::string, std::string>>{
             {"bash", "usr/share/bash-completion/completions/gua"},
             {"zsh", "usr/share/zsh/vendor-completions/_gua"},
             {"fish", "usr/share/fish/vendor_completions.d/gua.fish"}}) {
        EXPECT_EQ(read_text(tree / file), run_gua({"completion", shell_name}).out) << file;
    }
    // The changelog's newest entry is this version (a native package: no Debian revision).
    const std::string version = shell("dpkg-deb -f " + quoted(s_deb) + " Version").second;
    const std::string changelog = read_text(source / "packaging/debian/changelog");
    EXPECT_EQ(changelog.substr(0, changelog.find('\n')),
              "gua (" + version.substr(0, version.size() - 1) + ") unstable; urgency=medium");
}

TEST_F(Packaging, LintianFindsNoErrorsAndNoWarnings) {
    if (!have("lintian")) {
        GTEST_SKIP() << "lintian is not installed (scripts/install-deps.sh --test installs it)";
    }
    // Infos and overridden tags (each override says why, in the package) are allowed.
    for (const fs::path& deb : {s_deb, s_kubelet_deb}) {
        const auto [code, out] = shell("lintian --fail-on error,warning " + quoted(deb));
        EXPECT_EQ(code, 0) << deb << "\n" << out;
        std::istringstream in(out);
        std::string line;
        while (std::getline(in, line)) {
            EXPECT_FALSE(line.rfind("E: ", 0) == 0 || line.rfind("W: ", 0) == 0) << line;
        }
    }
}

/// Runs `script` (sh -e, as root) in a private mount namespace, chrooted into an overlay of the
/// host's root filesystem whose changes go to <work>/upper: a scratch root where dpkg runs for
/// real (maintainer scripts, adduser, conffiles) without touching the host. `deb` is copied to
/// /tmp/gua.deb there first. Exit code 125: no overlay could be made here.
std::pair<int, std::string> in_scratch_root(const fs::path& work, const fs::path& deb,
                                            const std::string& script) {
    for (const char* dir : {"upper", "work", "merged"}) {
        fs::create_directories(work / dir);
    }
    std::ofstream(work / "script.sh") << script;
    const std::string m = (work / "merged").string();
    const std::string inner =
        "mount -t overlay overlay -o lowerdir=/,upperdir=" + (work / "upper").string() +
        ",workdir=" + (work / "work").string() + " " + m + " || exit 125\n" +
        "mount --bind /proc " + m + "/proc && mount --bind /dev " + m + "/dev\n" +
        "mount -t tmpfs tmpfs " + m + "/run && mount -t tmpfs tmpfs " + m + "/tmp\n" + "cp " +
        (work / "script.sh").string() + " " + m + "/tmp/script.sh\n" + "cp " + deb.string() + " " +
        m + "/tmp/gua.deb\n" + "exec chroot " + m + " sh -e /tmp/script.sh\n";
    std::ofstream(work / "enter.sh") << inner;
    return shell("unshare -m sh -e " + quoted(work / "enter.sh"));
}

TEST_F(Packaging, InstallsRemovesAndPurgesInAScratchRoot) {
    if (::geteuid() != 0 || !have("unshare")) {
        GTEST_SKIP() << "needs root and unshare for a scratch root";
    }
    if (shell("dpkg-query -W -f='${Status}' gua").second == "install ok installed") {
        GTEST_SKIP() << "gua is installed on this host; the scratch root would be an upgrade";
    }
    const auto [code, out] = in_scratch_root(root() / "scratch", s_deb,
                                             R"sh(
echo '== install'
dpkg -i /tmp/gua.deb
dpkg-query -W -f='${Status}\n' gua
echo "conffiles: $(dpkg-query -W -f='${Conffiles}' gua | awk '{print $1}' | tr '\n' ' ')"
getent passwd gua | cut -d: -f1,6,7
stat -c '%a %U:%G %n' /usr/bin/gua /etc/gua/gua.toml /lib/systemd/system/gua.service \
    /usr/share/doc/gua/copyright
gua version | head -1
echo '== local change to the conffile, then remove'
echo '# local' >> /etc/gua/gua.toml
mkdir -p /var/lib/gua && echo data > /var/lib/gua/gua.db
dpkg -r gua
dpkg-query -W -f='${Status}\n' gua
test -e /usr/bin/gua && echo 'binary kept' || echo 'binary removed'
tail -1 /etc/gua/gua.toml
cat /var/lib/gua/gua.db
echo '== purge'
dpkg -P gua
test -e /etc/gua/gua.toml && echo 'config kept' || echo 'config removed'
test -e /var/lib/gua && echo 'state kept' || echo 'state removed'
)sh");
    if (code == 125) {
        GTEST_SKIP() << "no overlay mount here: " << out;
    }
    ASSERT_EQ(code, 0) << out;
    const std::string version = run_gua({"--version"}).out;
    for (const std::string& expected :
         {std::string("install ok installed\n"), std::string("conffiles: /etc/gua/gua.toml \n"),
          std::string("gua:/var/lib/gua:/usr/sbin/nologin\n"),
          std::string("755 root:root /usr/bin/gua\n"),
          std::string("644 root:root /etc/gua/gua.toml\n"),
          std::string("644 root:root /lib/systemd/system/gua.service\n"),
          std::string("644 root:root /usr/share/doc/gua/copyright\n"), version,
          // remove: the binary goes, the changed conffile and the recorded data stay
          std::string("deinstall ok config-files\n"), std::string("binary removed\n"),
          std::string("# local\n"), std::string("data\n"),
          // purge: both go
          std::string("config removed\n"), std::string("state removed\n")}) {
        EXPECT_TRUE(contains(out, expected)) << expected << "\n" << out;
    }
    EXPECT_FALSE(contains(out, "`gua uninstall")) << "prerm told the user to run gua:\n" << out;
}

// Reproducible: a second cpack run of the same build, a few seconds later and without
// SOURCE_DATE_EPOCH in the environment, gives the same bytes (the changelog's date stands in).
TEST_F(Packaging, TwoBuildsOfOneTreeAreByteIdentical) {
    const fs::path again = root() / "again";
    fs::create_directories(again);
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    const auto [code, out] =
        shell("cd " + quoted(again) + " && env -u SOURCE_DATE_EPOCH cpack -G DEB --config " +
              quoted(fs::path(GUA_BUILD_DIR) / "CPackConfig.cmake") + " -B " + quoted(again));
    ASSERT_EQ(code, 0) << out;
    for (const fs::path& deb : {s_deb, s_kubelet_deb}) {
        const fs::path again_deb = again / deb.filename();
        ASSERT_TRUE(fs::exists(again_deb)) << out;
        EXPECT_EQ(read_text(again_deb), read_text(deb))
            << shell("cmp -l " + quoted(deb) + " " + quoted(again_deb) + " | head").second;
    }
    const fs::path second = again / s_deb.filename();
    // The members' times are the changelog's date, not the build's.
    const std::string listing = shell("TZ=UTC ar tv " + quoted(second)).second;
    EXPECT_TRUE(contains(listing, "Nov 25 12:00 2026")) << listing;
}

// The Kubernetes image: packaging/kubernetes/Dockerfile's install steps replayed with apt's own
// resolution of --no-install-recommends on an empty system, and daemonset.yaml's container
// command run in the result (tests/ops/kubernetes_image.sh says how, without docker).
TEST_F(Packaging, KubernetesImageServesMetricsWithTheDaemonSetsCommand) {
    const fs::path source = GUA_SOURCE_DIR;
    const auto [code, out] = shell(
        "bash " + quoted(source / "tests/ops/kubernetes_image.sh") + " " + quoted(source) + " " +
        quoted(s_deb) + " " + quoted(s_kubelet_deb) + " " +
        quoted(fs::path(GUA_FAKE_NVML_DIR) / "libnvidia-ml.so.1") + " " + quoted(root() / "image"));
    if (code == 77) {
        GTEST_SKIP() << out;
    }
    EXPECT_EQ(code, 0) << out;
    EXPECT_TRUE(contains(out, "served /metrics")) << out;
    EXPECT_TRUE(contains(out, "loaded the kubelet module")) << out;
}

// The packaged gua finds the packaged module where gua-kubelet puts it, relative to its own
// directory, whatever prefix this tree was configured with: without gua-kubelet, a daemon with
// [allocations] kubelet_socket stops with one line naming that path; with it, the daemon records
// the pod a kubelet (the tests' pod-resources server) says holds the card.
TEST_F(Packaging, InstalledGuaLoadsTheModuleOnlyFromGuaKubelet) {
    const fs::path tree = unpacked();
    const std::string uuid = "GPU-7a0e0000-0000-0000-0000-00000000cafe";
    std::ofstream(root() / "scenario.json")
        << "{\"devices\": [{\"uuid\": \"" << uuid << "\", \"util\": [[0, 0]]}]}";
    const std::string socket = (root() / "kubelet.sock").string();
    std::ofstream(root() / "gua.toml") << "[allocations]\nkubelet_socket = \"" << socket << "\"\n";
    const auto daemon = [&](const std::string& db) {
        return shell("env -u GUA_KUBELET_MODULE -u GUA_NVML_LIBRARY -u GUA_DB "
                     "GUA_FAKE_NVML_CLOCK_FILE= GUA_FAKE_NVML_SCENARIO=" +
                     quoted(root() / "scenario.json") + " " + quoted(tree / "usr/bin/gua") +
                     " daemon --db " + quoted(root() / db) + " --config " +
                     quoted(root() / "gua.toml") + " --nvml-library " +
                     quoted(fs::path(GUA_FAKE_NVML_DIR) / "libnvidia-ml.so.1") +
                     " --interval 500ms --ticks 4 --quiet");
    };
    const auto [missing_code, missing] = daemon("without.db");
    EXPECT_NE(missing_code, 0) << missing;
    EXPECT_EQ(std::count(missing.begin(), missing.end(), '\n'), 1) << missing;
    // `gua-kubelet`'s place, relative to the binary: <tree>/usr/lib/…/gua/gua-kubelet.so
    EXPECT_TRUE(contains(missing, (tree / "usr/lib").string())) << missing;
    EXPECT_TRUE(contains(missing, std::string("/gua/") + k_module)) << missing;
    EXPECT_TRUE(contains(missing, "install the Debian package gua-kubelet")) << missing;

    EXPECT_EQ(shell("dpkg-deb -x " + quoted(s_kubelet_deb) + " " + quoted(tree)).first, 0);
    alloc::fake_kubelet::FakeLister lister;
    lister.set({{"ml", "train", "nvidia.com/gpu", {uuid}}});
    const auto server = alloc::fake_kubelet::serve(lister, socket);
    ASSERT_NE(server, nullptr);
    const auto [code, out] = daemon("with.db");
    server->Shutdown();
    ASSERT_EQ(code, 0) << out;
    EXPECT_FALSE(lister.served().empty()) << "the daemon never asked the kubelet";
    const GuaRun job =
        run_gua({"job", "ml/train", "--db", (root() / "with.db").string(), "--format", "json"});
    ASSERT_EQ(job.exit_code, 0) << job.err;
    const nlohmann::json j = nlohmann::json::parse(job.out);
    EXPECT_EQ(j["job"]["kind"], "pod");
    EXPECT_EQ(j["job"]["gpus_allocated"], 1);
    EXPECT_EQ(j["gpus"][0]["uuid"], uuid);
}

} // namespace

TEST(PackagingUnit, SystemdAnalyzeVerifyPasses) {
    if (!have("systemd-analyze")) {
        GTEST_SKIP() << "systemd-analyze is not installed";
    }
    // verify checks that ExecStart= exists, so the units are checked with this build's binary;
    // the timer is checked with the service it starts next to it.
    std::string pattern = (fs::temp_directory_path() / "gua-unit-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    for (const char* name : {"gua.service", "gua-digest.service", "gua-digest.timer"}) {
        std::string text = read_text(fs::path(GUA_SOURCE_DIR) / "packaging" / name);
        if (const std::size_t at = text.find("ExecStart=/usr/bin/gua "); at != std::string::npos) {
            text.replace(at, 23, "ExecStart=" + std::string(GUA_BINARY) + " ");
        }
        std::ofstream(fs::path(pattern) / name) << text;
    }
    for (const char* name : {"gua.service", "gua-digest.timer"}) {
        const auto [code, out] =
            shell("systemd-analyze verify --man=no " + quoted(fs::path(pattern) / name));
        EXPECT_EQ(code, 0) << name << ": " << out;
        EXPECT_EQ(out, "") << name << ": systemd-analyze verify printed warnings";
    }
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

TEST(PackagingUnit, ManPageNamesEveryCommandAndTheServerFlags) {
    const std::string page = read_text(fs::path(GUA_SOURCE_DIR) / "packaging/gua.1");
    // Every command `gua --help` lists, as a .B heading of COMMANDS.
    const GuaRun help = run_gua({"--help"});
    std::istringstream in(help.out.substr(help.out.find("Subcommands:")));
    std::string line;
    std::getline(in, line);
    int commands = 0;
    while (std::getline(in, line) && line.rfind("  ", 0) == 0) {
        const std::string name = line.substr(2, line.find(' ', 2) - 2);
        EXPECT_TRUE(contains(page, "\n.B " + name + " ") || contains(page, "\n.B " + name + "\n") ||
                    contains(page, "\n.B " + name + "\\"))
            << name;
        ++commands;
    }
    EXPECT_GE(commands, 12);
    for (const char* part :
         {"\\-\\-listen", "\\-\\-web\\-config", "\\-\\-prometheus", "\\-\\-price", "[pricing]",
          "[retention]", "[teams]", "[policy]", "[[policy.rule]]", "SHELL COMPLETION",
          "gua\\-rules.yml", "libcurl4", "libmicrohttpd12"}) {
        EXPECT_TRUE(contains(page, part)) << part;
    }
}

/// "key" for lines "key = ..." or "#key = ..." of a TOML file (section headers as "[name]").
std::set<std::string> listed_keys(const std::string& text) {
    std::set<std::string> out;
    std::istringstream in(text);
    std::string line;
    std::string section;
    while (std::getline(in, line)) {
        std::string body = line.rfind('#', 0) == 0 ? line.substr(1) : line;
        if (body.rfind('[', 0) == 0) {
            section = body.substr(0, body.find(']') + 1);
            if (body.rfind("[[", 0) == 0) {
                section = body.substr(0, body.find("]]") + 2);
            }
            out.insert(section);
        } else if (const std::size_t eq = body.find(" = ");
                   eq != std::string::npos && body.find(' ') == eq) {
            out.insert(section + body.substr(0, eq));
        }
    }
    return out;
}

TEST(PackagingUnit, DefaultConfigListsEverySectionAndKeyAndChangesNothing) {
    const std::string text = read_text(fs::path(GUA_SOURCE_DIR) / "packaging/gua.toml");
    const std::set<std::string> keys = listed_keys(text);
    // Every key of docs/configuration.md and docs/policy.md.
    for (const char* key : {"[thresholds]active_util_pct",
                            "[thresholds]held_mib",
                            "[thresholds]graphics_is_holder",
                            "[daemon]interval",
                            "[daemon]db",
                            "[daemon]listen",
                            "[daemon]web_config",
                            "[retention]raw",
                            "[retention]rollup",
                            "[pricing]currency",
                            "[pricing]default",
                            "[pricing]spot_discount",
                            "[pricing.models]",
                            "[report]group_by",
                            "[teams]",
                            "[policy]enabled",
                            "[policy]max_actions_per_hour",
                            "[policy]notify_command",
                            "[policy]exempt_users",
                            "[policy]exempt_commands",
                            "[policy]exempt_containers",
                            "[[policy.rule]]name",
                            "[[policy.rule]]after",
                            "[[policy.rule]]action",
                            "[[policy.rule]]min_memory",
                            "[[policy.rule]]users",
                            "[[policy.rule]]groups",
                            "[[policy.rule]]commands",
                            "[[policy.rule]]containers",
                            "[[policy.rule]]gpus",
                            "[[policy.rule]]grace",
                            "[[policy.rule]]dry_run"}) {
        EXPECT_EQ(keys.count(key), 1u) << key;
    }
    // As shipped (everything commented) it is the built-in defaults: the same demo report as an
    // empty file. With every line uncommented it is still a valid configuration.
    test::TempDir dir;
    std::ofstream(dir.file("empty.toml")) << "";
    std::ofstream(dir.file("shipped.toml")) << text;
    std::string uncommented;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        const bool setting = line.rfind("#[", 0) == 0 ||
                             (line.rfind('#', 0) == 0 && line.find(" = ") != std::string::npos &&
                              line.find(' ') == line.find(" = "));
        uncommented += (setting ? line.substr(1) : line) + "\n";
    }
    std::ofstream(dir.file("uncommented.toml")) << uncommented;
    const auto demo = [&](const std::string& config) {
        return run_gua({"demo", "--ticks", "20", "-q", "--format", "json", "--config",
                        dir.file(config), "--start", "2026-05-01T00:00:00Z"});
    };
    const GuaRun empty = demo("empty.toml");
    const GuaRun shipped = demo("shipped.toml");
    ASSERT_EQ(empty.exit_code, 0) << empty.err;
    EXPECT_EQ(shipped.exit_code, 0) << shipped.err;
    EXPECT_EQ(shipped.out, empty.out);
    const GuaRun all = demo("uncommented.toml");
    EXPECT_EQ(all.exit_code, 0) << all.err << uncommented;
}

} // namespace gua::ops::testing
