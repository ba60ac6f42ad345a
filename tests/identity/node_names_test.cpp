// SPDX-License-Identifier: Apache-2.0
// identity::PodLogs, RuntimeNames and NodeNames over a fabricated node: the kubelet's log
// directories, Docker's and Podman's state files; misses degrade to no names, never wrong ones.
#include "identity/node_names.hpp"
#include "identity/node_tree.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace gua::identity {
namespace node_names_test { // named after the file: unique in a unity batch

using testing::NodeTree;

const std::string k_uid = "0c1d2e3f-4a5b-4c6d-8e7f-0123456789ab";
const std::string k_uid2 = "7e8f9a0b-1c2d-4e3f-8a9b-abcdef012345";
const std::string k_id_a = std::string(63, 'a') + "1";
const std::string k_id_b = std::string(63, 'b') + "2";
const std::string k_id_c = std::string(63, 'c') + "3";

TEST(PodDirName, SplitsNamespacePodAndUid) {
    EXPECT_EQ(parse_pod_dir_name("ml_train-0_" + k_uid), (PodDirName{"ml", "train-0", k_uid}));
    // A static pod's uid is the hash of its manifest: hex without dashes.
    EXPECT_EQ(parse_pod_dir_name("kube-system_etcd-n1_" + std::string(32, 'f')),
              (PodDirName{"kube-system", "etcd-n1", std::string(32, 'f')}));
    EXPECT_EQ(parse_pod_dir_name(k_uid), std::nullopt) << "legacy layout names nothing";
    EXPECT_EQ(parse_pod_dir_name("ml_train_0_" + k_uid), std::nullopt);
    EXPECT_EQ(parse_pod_dir_name("ml__" + k_uid), std::nullopt);
    EXPECT_EQ(parse_pod_dir_name("ml_train-0_"), std::nullopt);
    EXPECT_EQ(parse_pod_dir_name("ml_train-0_XYZ"), std::nullopt);
}

TEST(ContainerLogName, SplitsPodNamespaceContainerAndId) {
    EXPECT_EQ(parse_container_log_name("train-0_ml_trainer-" + k_id_a + ".log"),
              (ContainerLogName{"train-0", "ml", "trainer", k_id_a}));
    // The kubelet cuts names to 255 bytes, which cuts the id: such a link names nothing.
    EXPECT_EQ(parse_container_log_name("train-0_ml_trainer-" + k_id_a.substr(0, 60) + ".log"),
              std::nullopt);
    EXPECT_EQ(parse_container_log_name("train-0_ml_trainer" + k_id_a + ".log"), std::nullopt);
    EXPECT_EQ(parse_container_log_name("train-0_trainer-" + k_id_a + ".log"), std::nullopt);
    EXPECT_EQ(parse_container_log_name("train-0_ml_trainer-" + k_id_a), std::nullopt);
    EXPECT_EQ(parse_container_log_name("train-0_ml_trainer-" + std::string(64, 'G') + ".log"),
              std::nullopt);
}

class PodLogsTree : public ::testing::Test {
  protected:
    PodLogs logs() const { return PodLogs(m_node.paths().pod_logs, m_node.paths().container_logs); }
    NodeTree m_node;
};

TEST_F(PodLogsTree, ContainerLinksNameEachContainerOfAPod) {
    m_node.add_pod_container("ml", "train-0", k_uid, "trainer");
    m_node.add_pod_container("ml", "train-0", k_uid, "sidecar");
    m_node.add_link("ml", "train-0", k_uid, "trainer", k_id_a);
    m_node.add_link("ml", "train-0", k_uid, "sidecar", k_id_b);
    PodLogs pods = logs();
    const PodNames a = pods.lookup(k_uid, k_id_a, 0);
    EXPECT_EQ(a.pod_namespace, "ml");
    EXPECT_EQ(a.pod_name, "train-0");
    EXPECT_EQ(a.container_name, "trainer");
    EXPECT_EQ(pods.lookup(k_uid, k_id_b, 0).container_name, "sidecar");
    // Two containers and no link for this id: the pod is named, the container is not guessed.
    const PodNames c = pods.lookup(k_uid, k_id_c, 0);
    EXPECT_EQ(c.pod_name, "train-0");
    EXPECT_EQ(c.container_name, "");
}

TEST_F(PodLogsTree, TheOnlyContainerDirectoryNamesTheContainerWithoutALink) {
    m_node.add_pod_container("vision", "notebook-7c9f", k_uid, "jupyter");
    PodLogs pods = logs();
    const PodNames n = pods.lookup(k_uid, k_id_a, 0);
    EXPECT_EQ(n.pod_namespace, "vision");
    EXPECT_EQ(n.pod_name, "notebook-7c9f");
    EXPECT_EQ(n.container_name, "jupyter");
    EXPECT_EQ(pods.lookup(k_uid, "", 0).container_name, "jupyter");
}

TEST_F(PodLogsTree, ALogFileLinkingToTheContainerIdNamesIt) {
    // cri-dockerd: the kubelet's log file is a link to Docker's <id>-json.log.
    const std::string dir = m_node.add_pod_container("ml", "train-0", k_uid, "trainer");
    m_node.add_pod_container("ml", "train-0", k_uid, "init");
    std::filesystem::remove(dir + "/trainer/0.log");
    std::filesystem::create_symlink("/var/lib/docker/containers/" + k_id_a + "/" + k_id_a +
                                        "-json.log",
                                    dir + "/trainer/0.log");
    PodLogs pods = logs();
    EXPECT_EQ(pods.lookup(k_uid, k_id_a, 0).container_name, "trainer");
    EXPECT_EQ(pods.lookup(k_uid, k_id_b, 0).container_name, "");
}

TEST_F(PodLogsTree, ALinkOfAnotherPodNeverNamesTheContainer) {
    m_node.add_pod_container("ml", "train-0", k_uid, "trainer");
    m_node.add_pod_container("ml", "train-0", k_uid, "sidecar");
    m_node.add_pod_container("ml", "other", k_uid2, "trainer");
    m_node.add_link("ml", "other", k_uid2, "trainer", k_id_a);
    PodLogs pods = logs();
    const PodNames n = pods.lookup(k_uid, k_id_a, 0);
    EXPECT_EQ(n.pod_name, "train-0");
    EXPECT_EQ(n.container_name, "") << "the id belongs to pod 'other', not this uid";
}

TEST_F(PodLogsTree, ALinkIntoAnEarlierPodOfTheSameNameNamesNothing) {
    // A StatefulSet pod deleted and created again: same names, a new uid. A link whose target
    // is the old pod's directory does not name a container of the new one.
    m_node.add_pod_container("ml", "train-0", k_uid, "trainer");
    m_node.add_pod_container("ml", "train-0", k_uid, "sidecar");
    m_node.add_pod_container("ml", "train-0", k_uid2, "trainer");
    m_node.add_link("ml", "train-0", k_uid2, "trainer", k_id_a);
    PodLogs pods = logs();
    EXPECT_EQ(pods.lookup(k_uid, k_id_a, 0).container_name, "");
    EXPECT_EQ(pods.lookup(k_uid2, k_id_a, 0).container_name, "trainer");
}

TEST_F(PodLogsTree, MissingOrUnreadableTreesGiveNoNames) {
    PodLogs missing(m_node.root() + "/nowhere", m_node.root() + "/nowhere-either");
    const PodNames n = missing.lookup(k_uid, k_id_a, 0);
    EXPECT_EQ(n.pod_namespace + n.pod_name + n.container_name, "");
    // A file where the directories should be (unreadable as a directory, even for root).
    std::ofstream(m_node.root() + "/file") << "x";
    PodLogs not_dirs(m_node.root() + "/file", m_node.root() + "/file");
    const PodNames f = not_dirs.lookup(k_uid, k_id_a, 0);
    EXPECT_EQ(f.pod_namespace + f.pod_name + f.container_name, "");
    // A pod this node does not have.
    m_node.add_pod_container("ml", "train-0", k_uid, "trainer");
    EXPECT_EQ(logs().lookup(k_uid2, k_id_a, 0).pod_name, "");
}

TEST_F(PodLogsTree, LookupsAreServedFromTheCache) {
    const std::string dir = m_node.add_pod_container("ml", "train-0", k_uid, "trainer");
    PodLogs pods = logs();
    EXPECT_EQ(pods.lookup(k_uid, k_id_a, 0).container_name, "trainer");
    // Gone from the disk: a cached pod and container are still named (no directory read).
    std::filesystem::remove_all(dir);
    const PodNames n = pods.lookup(k_uid, k_id_a, 1);
    EXPECT_EQ(n.pod_name, "train-0");
    EXPECT_EQ(n.container_name, "trainer");
}

TEST_F(PodLogsTree, ANewPodIsFoundWhenTheDirectoryChanges) {
    m_node.add_pod_container("ml", "train-0", k_uid, "trainer");
    PodLogs pods = logs();
    EXPECT_EQ(pods.lookup(k_uid2, "", 0).pod_name, "");
    m_node.add_pod_container("ml", "train-1", k_uid2, "trainer");
    // Within k_rescan_us only a new mtime of the root makes it read again (file times can be as
    // coarse as a clock tick, so the test sets one).
    const std::string root = m_node.paths().pod_logs;
    std::filesystem::last_write_time(root, std::filesystem::last_write_time(root) +
                                               std::chrono::seconds(1));
    EXPECT_EQ(pods.lookup(k_uid2, "", 1).pod_name, "train-1");
}

TEST_F(PodLogsTree, AnUnchangedDirectoryIsReadAgainAfterTheRescanPeriod) {
    PodLogs pods = logs();
    EXPECT_EQ(pods.lookup(k_uid, "", 0).pod_name, "");
    const std::string root = m_node.paths().pod_logs;
    const auto mtime = std::filesystem::last_write_time(root);
    m_node.add_pod_container("ml", "train-0", k_uid, "trainer");
    std::filesystem::last_write_time(root, mtime); // as if created within the same clock tick
    EXPECT_EQ(pods.lookup(k_uid, "", PodLogs::k_rescan_us - 1).pod_name, "")
        << "the directory looks unchanged: not read again yet";
    EXPECT_EQ(pods.lookup(k_uid, "", PodLogs::k_rescan_us).pod_name, "train-0");
}

TEST(DockerConfig, NameWithoutItsSlash) {
    EXPECT_EQ(docker_name_of(R"({"ID":"x","Name":"/trainer","Config":{}})"), "trainer");
    EXPECT_EQ(docker_name_of(R"({"ID":"x"})"), "");
    EXPECT_EQ(docker_name_of(R"({"Name":7})"), "");
    EXPECT_EQ(docker_name_of("not json"), "");
    EXPECT_EQ(docker_name_of(""), "");
}

TEST(PodmanStore, FirstNameById) {
    std::unordered_map<std::string, std::string> names;
    EXPECT_TRUE(podman_names_of(R"([{"id":"a","names":["web","alias"]},{"id":"b"},)"
                                R"({"id":"c","names":[]},7,{"id":"d","names":["db"]}])",
                                names));
    EXPECT_EQ(names, (std::unordered_map<std::string, std::string>{{"a", "web"}, {"d", "db"}}));
    EXPECT_FALSE(podman_names_of("{}", names));
    EXPECT_FALSE(podman_names_of("[", names));
}

class RuntimeTree : public ::testing::Test {
  protected:
    RuntimeNames names() const {
        return RuntimeNames(m_node.paths().docker_root, m_node.paths().podman_root);
    }
    NodeTree m_node;
};

TEST_F(RuntimeTree, DockerThenPodman) {
    m_node.add_docker(k_id_a, R"({"ID":")" + k_id_a + R"(","Name":"/llm-serve"})");
    m_node.write_podman(R"([{"id":")" + k_id_b + R"(","names":["finetune"]}])");
    m_node.write_podman(R"([{"id":")" + k_id_c + R"(","names":["scratch"]}])",
                        "volatile-containers.json");
    RuntimeNames runtimes = names();
    EXPECT_EQ(runtimes.lookup(k_id_a, 0), "llm-serve");
    EXPECT_EQ(runtimes.lookup(k_id_b, 0), "finetune");
    EXPECT_EQ(runtimes.lookup(k_id_c, 0), "scratch");
    EXPECT_EQ(runtimes.lookup(std::string(64, 'e'), 0), "");
    EXPECT_EQ(runtimes.lookup("", 0), "");
}

TEST_F(RuntimeTree, PodmanStoreIsReadAgainWhenItChanges) {
    m_node.write_podman("[]");
    RuntimeNames runtimes = names();
    EXPECT_EQ(runtimes.lookup(k_id_b, 0), "");
    m_node.write_podman(R"([{"id":")" + k_id_b + R"(","names":["finetune"]}])");
    EXPECT_EQ(runtimes.lookup(k_id_b, 0), "") << "not looked at again before the reread period";
    EXPECT_EQ(runtimes.lookup(k_id_b, RuntimeNames::k_store_reread_us), "finetune")
        << "its size and mtime changed";
}

TEST_F(RuntimeTree, RootlessPodmanFromTheOwnersHome) {
    const std::string home = m_node.root() + "/home/ann";
    std::filesystem::create_directories(home +
                                        "/.local/share/containers/storage/overlay-containers");
    std::ofstream(home + "/.local/share/containers/storage/overlay-containers/containers.json")
        << R"([{"id":")" + k_id_b + R"(","names":["anns-job"]}])";
    RuntimeNames runtimes = names();
    EXPECT_EQ(runtimes.lookup(k_id_b, 0), "") << "not in the system store";
    EXPECT_EQ(runtimes.lookup_rootless(k_id_b, home, ::geteuid(), 0), "anns-job");
    EXPECT_EQ(runtimes.lookup_rootless(k_id_c, home, ::geteuid(), 0), "");
    EXPECT_EQ(runtimes.lookup_rootless(k_id_c, "", ::geteuid(), 0), "");
}

TEST_F(RuntimeTree, UnreadableStateGivesNoName) {
    m_node.add_docker(k_id_a, "{truncated");
    std::filesystem::create_directories(m_node.root() + "/docker/containers/" + k_id_b +
                                        "/config.v2.json"); // a directory, not a file
    m_node.write_podman("not json");
    RuntimeNames runtimes = names();
    EXPECT_EQ(runtimes.lookup(k_id_a, 0), "");
    EXPECT_EQ(runtimes.lookup(k_id_b, 0), "");
}

TEST(NodeNamesEnvironment, EachPathFromItsVariable) {
    ::setenv("GUA_POD_LOGS_DIR", "/t/pods", 1);
    ::setenv("GUA_CONTAINER_LOGS_DIR", "", 1); // empty: the default
    ::setenv("GUA_DOCKER_ROOT", "/t/docker", 1);
    ::unsetenv("GUA_PODMAN_ROOT");
    const NodePaths p = NodePaths::from_environment();
    ::unsetenv("GUA_POD_LOGS_DIR");
    ::unsetenv("GUA_CONTAINER_LOGS_DIR");
    ::unsetenv("GUA_DOCKER_ROOT");
    EXPECT_EQ(p.pod_logs, "/t/pods");
    EXPECT_EQ(p.container_logs, "/var/log/containers");
    EXPECT_EQ(p.docker_root, "/t/docker");
    EXPECT_EQ(p.podman_root, "/var/lib/containers/storage");
}

TEST(NodeNamesIdentity, KubernetesNamesForAPodElseTheRuntimeName) {
    NodeTree node;
    node.add_pod_container("ml", "train-0", k_uid, "trainer");
    node.add_docker(k_id_a, R"({"Name":"/k8s_trainer_train-0_ml_x_0"})");
    node.add_docker(k_id_b, R"({"Name":"/llm-serve"})");
    NodeNames names(node.paths());
    telemetry::Identity pod;
    pod.pod_uid = k_uid;
    pod.container_id = k_id_a;
    names.name(pod, 0);
    EXPECT_EQ(pod.pod_namespace, "ml");
    EXPECT_EQ(pod.pod_name, "train-0");
    EXPECT_EQ(pod.container_name, "trainer") << "the pod's container, not Docker's name";
    EXPECT_FALSE(names_missing(pod));
    telemetry::Identity docker;
    docker.container_id = k_id_b;
    names.name(docker, 0);
    EXPECT_EQ(docker.container_name, "llm-serve");
    EXPECT_EQ(docker.pod_namespace + docker.pod_name, "");
    telemetry::Identity unknown_pod;
    unknown_pod.pod_uid = k_uid2;
    unknown_pod.container_id = k_id_b;
    names.name(unknown_pod, 0);
    EXPECT_EQ(unknown_pod.pod_name + unknown_pod.container_name, "")
        << "a pod the node does not name gets no name, not its container's Docker name";
    EXPECT_TRUE(names_missing(unknown_pod));
    telemetry::Identity bare;
    names.name(bare, 0);
    EXPECT_FALSE(names_missing(bare));
}

} // namespace node_names_test
} // namespace gua::identity
