// SPDX-License-Identifier: Apache-2.0
// packaging/kubernetes/: every manifest is valid YAML (yamllint) and valid against the Kubernetes
// API models of Debian's python3-kubernetes, and what gua relies on agrees (the daemon's options,
// ports, mounts, selectors) — tests/fleet/kubernetes_manifests.py; a broken copy is rejected.
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace gua::fleet_testing {
namespace kubernetes_manifests_test { // named after the file: unique in a unity batch

constexpr const char* k_python = "/usr/bin/python3"; // Debian's, where python3-kubernetes is
constexpr const char* k_yamllint = "/usr/bin/yamllint";
constexpr int k_skip = 77;

std::string manifests() {
    return std::string(GUA_SOURCE_DIR) + "/packaging/kubernetes";
}

test::RunResult validate(const std::string& dir) {
    return test::run(
        k_python,
        {std::string(GUA_SOURCE_DIR) + "/tests/fleet/kubernetes_manifests.py", dir, GUA_BINARY});
}

TEST(KubernetesManifests, ValidAndConsistentWithTheDaemon) {
    if (access(k_python, X_OK) != 0) {
        GTEST_SKIP() << "no /usr/bin/python3";
    }
    const test::RunResult r = validate(manifests());
    if (r.exit_code == k_skip) {
        GTEST_SKIP() << r.out;
    }
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("7 documents valid"), std::string::npos) << r.out;
}

TEST(KubernetesManifests, YamllintAcceptsThem) {
    if (access(k_yamllint, X_OK) != 0) {
        GTEST_SKIP() << "yamllint not installed (scripts/install-deps.sh --test)";
    }
    const test::RunResult r =
        test::run(k_yamllint, {"-f", "parsable", "-d",
                               "{extends: default, rules: {line-length: {max: 100}, "
                               "document-start: disable, truthy: {check-keys: false}}}",
                               manifests()});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

/// Replaces the first `from` in `path` by `to`.
void edit(const std::string& path, const std::string& from, const std::string& to) {
    std::stringstream text;
    text << std::ifstream(path).rdbuf();
    std::string s = text.str();
    const std::size_t at = s.find(from);
    ASSERT_NE(at, std::string::npos) << from << " not in " << path;
    s.replace(at, from.size(), to);
    std::ofstream(path, std::ios::trunc) << s;
}

TEST(KubernetesManifests, ABrokenCopyIsRejected) {
    if (access(k_python, X_OK) != 0) {
        GTEST_SKIP() << "no /usr/bin/python3";
    }
    test::TempDir dir;
    std::filesystem::copy(manifests(), dir.path(), std::filesystem::copy_options::recursive);
    edit(dir.file("daemonset.yaml"), "mountPath: /var/log/pods\n              readOnly: true",
         "mountPath: /var/log/pods\n              readonly: true");
    edit(dir.file("daemonset.yaml"), "- --quiet", "- --silent");
    edit(dir.file("daemonset.yaml"), "containerPort: 10409", "containerPort: 9500");
    edit(dir.file("service.yaml"), "targetPort: metrics", "targetPort: http");
    edit(dir.file("servicemonitor.yaml"), "(namespace|pod|container|service|endpoint)",
         "(service|endpoint)");
    const test::RunResult r = validate(dir.path());
    if (r.exit_code == k_skip) {
        GTEST_SKIP() << r.out;
    }
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    for (const char* want :
         {"unknown field 'readonly' of V1VolumeMount", "--silent is not a `gua daemon` option",
          "--listen 0.0.0.0:10409 is not the container port 'metrics'",
          "/var/log/pods must be the node's /var/log/pods, mounted read-only",
          "port 'metrics' does not target the daemon's metrics port",
          "servicemonitor.yaml#0: the target label 'namespace' would replace gua's own"}) {
        EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
    }
}

} // namespace kubernetes_manifests_test
} // namespace gua::fleet_testing
