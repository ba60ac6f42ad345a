// SPDX-License-Identifier: Apache-2.0
// End to end: the daemon resolves who holds the (fake) GPUs from a real /proc — processes started
// under two other uids, a Jupyter kernel's command line, and processes in container and Slurm
// cgroups — and `gua report` attributes the card time to them. Needs root; skips otherwise.
#include "e2e/daemon_e2e.hpp"
#include "identity/child_process.hpp"
#include "support/cgroup_tree.hpp"

#include <algorithm>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace gua::e2e {
namespace {

using identity::testing::ChildProcess;
namespace fs = std::filesystem;

const std::string k_kernel = "5d6a0c8e-1b2f-4e3a-9c7d-0e1f2a3b4c5d";
const std::string k_cid = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d";
const std::string k_pod = "0c1d2e3f-4a5b-4c6d-8e7f-0123456789ab";

/// A program run as `uid`:`uid` with no supplementary groups, through setpriv.
std::vector<std::string> as_uid(int uid, std::vector<std::string> argv) {
    std::vector<std::string> out{"/usr/bin/setpriv", "--reuid=" + std::to_string(uid),
                                 "--regid=" + std::to_string(uid), "--clear-groups"};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
}

using test::CgroupTree;

class DaemonE2EIdentity : public DaemonTest {
  protected:
    void SetUp() override {
        if (geteuid() != 0) {
            GTEST_SKIP() << "needs root (processes under other uids, cgroups)";
        }
    }

    /// Starts `argv` and waits until it runs `comm`; names its pid in env `pid_env`.
    ChildProcess& start(const std::vector<std::string>& argv, const std::string& comm,
                        const std::string& pid_env) {
        m_children.push_back(std::make_unique<ChildProcess>(argv));
        ChildProcess& child = *m_children.back();
        EXPECT_GT(child.pid(), 0) << argv.front();
        EXPECT_TRUE(child.wait_for_comm(comm)) << argv.back();
        set_env(pid_env, std::to_string(child.pid()));
        return child;
    }

    /// Records three ticks of `scenario` and returns the report.
    json record(const json& scenario) {
        write_scenario(scenario);
        const test::RunResult r = run_daemon({"--interval", "250ms", "--ticks", "3", "--quiet"});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return report();
    }

    // Declared first, destroyed last: the cgroups are removed after the children were reaped.
    std::unique_ptr<CgroupTree> m_tree;
    std::vector<std::unique_ptr<ChildProcess>> m_children;
};

// GPU 0: "nobody" (uid 65534) holds 8000 MiB at 2 %        → idle-held, attributed to nobody
// GPU 1: uid 54321 (no passwd entry) computes at 80 %      → active, attributed to uid:54321
// GPU 2: a Jupyter kernel of uid 54321 holds 8000 MiB idle → idle-held, uid:54321, kernel id
TEST_F(DaemonE2EIdentity, UsersUnderTwoUidsAndAJupyterKernel) {
    start(as_uid(65534, {"/usr/bin/sleep", "60"}), "sleep", "GUA_E2E_PID_NOBODY");
    start(as_uid(54321, {"/usr/bin/sleep", "60"}), "sleep", "GUA_E2E_PID_54321");
    const std::string connection = path("runtime/kernel-" + k_kernel + ".json");
    start(as_uid(54321, {"/usr/bin/python3", "-c", "import time; time.sleep(60)", "-m",
                         "ipykernel_launcher", "-f", connection}),
          "python3", "GUA_E2E_PID_KERNEL");
    ASSERT_FALSE(HasFailure());
    const json rep = record(
        {{"devices", {{{"util", {{0, 2}}}}, {{"util", {{0, 80}}}}, {{"util", {{0, 2}}}}}},
         {"processes",
          {holder(0, 8000, 0, 0, "GUA_E2E_PID_NOBODY"), holder(1, 8000, 80, 0, "GUA_E2E_PID_54321"),
           holder(2, 8000, 0, 0, "GUA_E2E_PID_KERNEL")}}});

    const json nobody = identity_row(rep, "nobody");
    for (int gpu = 0; gpu < 3; ++gpu) { // at most one tick's end found its ring period running
        EXPECT_GT(measured_seconds(gpu), recorded_seconds(gpu) / 2) << gpu;
    }
    EXPECT_NEAR(seconds(nobody["idle_held_gpu_hours"]), measured_seconds(0), 1e-3);
    EXPECT_NEAR(seconds(nobody["active_gpu_hours"]), 0, 1e-3);
    // Its own per-process reading (0 % SM) makes all of the recorded time idle-held memory.
    EXPECT_NEAR(nobody["idle_held_gib_hours"].get<double>() * 3600,
                8000.0 / 1024 * recorded_seconds(0), 1e-2);
    const json other = identity_row(rep, "uid:54321");
    EXPECT_NEAR(seconds(other["active_gpu_hours"]), measured_seconds(1), 1e-3);
    EXPECT_NEAR(seconds(other["idle_held_gpu_hours"]), measured_seconds(2), 1e-3);
    EXPECT_EQ(rep["identities"]["total"], 2);

    test::RawDb raw(db());
    EXPECT_EQ(raw.one("SELECT group_concat(user || '/' || uid || '/' || jupyter_kernel, ',') FROM "
                      "(SELECT * FROM identity ORDER BY user, jupyter_kernel)"),
              "nobody/65534/,uid:54321/54321/,uid:54321/54321/" + k_kernel);
    EXPECT_EQ(raw.one("SELECT DISTINCT command || ' ' || user || ' ' || jupyter_kernel FROM "
                      "process_tick WHERE gpu = 2"),
              "python3 uid:54321 " + k_kernel);
}

// A Kubernetes container and a Docker container named by a fabricated node (the kubelet's log
// directories, Docker's state), as real cgroups: the database, `process_tick` and `gua now`
// name the pod, its namespace and the containers; names with terminal controls are escaped.
TEST_F(DaemonE2EIdentity, PodAndContainerNamesFromTheNode) {
    const std::optional<fs::path> v1 = test::find_cgroup_mount("name=systemd");
    const std::optional<fs::path> v2 = test::find_cgroup_mount("");
    if (!v1 && !v2) {
        GTEST_SKIP() << "no cgroup hierarchy mounted";
    }
    const std::string docker_id(64, 'd');
    std::string pod_path = "kubepods/burstable/pod" + k_pod + "/" + k_cid;
    std::string docker_path = "docker/" + docker_id;
    if (!v1) {
        std::string pod = k_pod;
        std::replace(pod.begin(), pod.end(), '-', '_');
        pod_path = "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + pod +
                   ".slice/cri-containerd-" + k_cid + ".scope";
        docker_path = "system.slice/docker-" + docker_id + ".scope";
    }
    // The node: pod ml-team/train-7d9f with containers trainer and logger, and the kubelet's
    // link for trainer's container id; a Docker container whose name has an escape sequence.
    const std::string pods = path("node/pods");
    const std::string pod_dir = pods + "/ml-team_train-7d9f_" + k_pod;
    for (const char* c : {"trainer", "logger"}) {
        fs::create_directories(pod_dir + "/" + c);
        std::ofstream(pod_dir + "/" + c + "/0.log") << "x\n";
    }
    fs::create_directories(path("node/containers"));
    fs::create_symlink(pod_dir + "/trainer/0.log",
                       path("node/containers/train-7d9f_ml-team_trainer-" + k_cid + ".log"));
    fs::create_directories(path("node/docker/containers/" + docker_id));
    std::ofstream(path("node/docker/containers/" + docker_id + "/config.v2.json"))
        << R"({"ID":")" << docker_id << R"(","Name":"/llm\u001b[31m-serve"})";
    set_env("GUA_POD_LOGS_DIR", pods);
    set_env("GUA_CONTAINER_LOGS_DIR", path("node/containers"));
    set_env("GUA_DOCKER_ROOT", path("node/docker"));
    set_env("GUA_PODMAN_ROOT", path("node/podman"));

    m_tree = std::make_unique<CgroupTree>(v1 ? *v1 : *v2, "gua-daemon-e2e");
    const ChildProcess& trainer = start({"/usr/bin/sleep", "60"}, "sleep", "GUA_E2E_PID_POD");
    const ChildProcess& serve = start({"/usr/bin/sleep", "60"}, "sleep", "GUA_E2E_PID_DOCKER");
    ASSERT_FALSE(HasFailure());
    if (!m_tree->place(pod_path, trainer.pid()) || !m_tree->place(docker_path, serve.pid())) {
        GTEST_SKIP() << "cgroups are not writable here";
    }
    const json rep = record({{"devices", {{{"util", {{0, 2}}}}, {{"util", {{0, 2}}}}}},
                             {"processes",
                              {holder(0, 8000, 0, 0, "GUA_E2E_PID_POD"),
                               holder(1, 4000, 0, 0, "GUA_E2E_PID_DOCKER")}}});

    test::RawDb raw(db());
    EXPECT_EQ(raw.one("SELECT DISTINCT pod_namespace || '/' || pod_name || '/' || container_name "
                      "|| ' ' || pod_uid FROM process_tick WHERE gpu = 0"),
              "ml-team/train-7d9f/trainer " + k_pod);
    EXPECT_EQ(raw.one("SELECT DISTINCT '[' || pod_namespace || pod_name || '] ' || "
                      "hex(container_name) || ' ' || container_id FROM process_tick WHERE gpu = 1"),
              "[] 6C6C6D1B5B33316D2D7365727665 " + docker_id)
        << "stored as the node wrote it (llm ESC [31m -serve)";

    // `gua now` (no daemon recording any more: it samples the fake driver itself, resolving the
    // same processes through the same node): the where column escapes the control character,
    // and JSON carries it as JSON does.
    const std::vector<std::string> now_args{
        "now", "--db", db(), "--nvml-library", fake_library(FakeVariant::modern), "--sample", "1s"};
    const test::RunResult text = test::run_gua(now_args, env());
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("pod:ml-team/train-7d9…"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("container:llm\\x1b[31m…"), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find('\x1b'), std::string::npos) << "no raw escape reaches the terminal";
    std::vector<std::string> json_args = now_args;
    json_args.insert(json_args.end(), {"--format", "json"});
    const test::RunResult j = test::run_gua(json_args, env());
    ASSERT_EQ(j.exit_code, 0) << j.err;
    EXPECT_NE(j.out.find(R"("container_name": "llm\u001b[31m-serve")"), std::string::npos) << j.out;
    const json now = json::parse(j.out);
    std::set<std::string> named;
    for (const json& h : now["holders"]) {
        named.insert(h["pod_namespace"].get<std::string>() + "/" +
                     h["pod_name"].get<std::string>() + "/" +
                     h["container_name"].get<std::string>());
    }
    EXPECT_EQ(named, (std::set<std::string>{"ml-team/train-7d9f/trainer", "//llm\x1b[31m-serve"}));
    EXPECT_EQ(rep["identities"]["total"], 1) << "both processes are root's";
}

// A container of a Kubernetes pod and a Slurm job step, as real cgroups (the v1 name=systemd
// hierarchy where it exists, else cgroup2 with the systemd-driver layout).
TEST_F(DaemonE2EIdentity, ContainerAndSlurmJobFromRealCgroups) {
    const std::optional<fs::path> v1 = test::find_cgroup_mount("name=systemd");
    const std::optional<fs::path> v2 = test::find_cgroup_mount("");
    if (!v1 && !v2) {
        GTEST_SKIP() << "no cgroup hierarchy mounted";
    }
    std::string pod_path = "kubepods/burstable/pod" + k_pod + "/" + k_cid;
    std::string job_path = "slurm/uid_1000/job_42/step_0";
    if (!v1) {
        std::string pod = k_pod;
        std::replace(pod.begin(), pod.end(), '-', '_');
        pod_path = "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + pod +
                   ".slice/cri-containerd-" + k_cid + ".scope";
        job_path = "system.slice/slurmstepd.scope/job_42/step_0/user/task_0";
    }
    m_tree = std::make_unique<CgroupTree>(v1 ? *v1 : *v2, "gua-daemon-e2e");
    const ChildProcess& container = start({"/usr/bin/sleep", "60"}, "sleep", "GUA_E2E_PID_POD");
    const ChildProcess& job = start({"/usr/bin/sleep", "60"}, "sleep", "GUA_E2E_PID_JOB");
    ASSERT_FALSE(HasFailure());
    if (!m_tree->place(pod_path, container.pid()) || !m_tree->place(job_path, job.pid())) {
        GTEST_SKIP() << "cgroups are not writable here";
    }
    record(
        {{"devices", {{{"util", {{0, 2}}}}, {{"util", {{0, 2}}}}}},
         {"processes",
          {holder(0, 8000, 0, 0, "GUA_E2E_PID_POD"), holder(1, 4000, 0, 0, "GUA_E2E_PID_JOB")}}});

    test::RawDb raw(db());
    EXPECT_EQ(raw.one("SELECT DISTINCT container_id || ' ' || pod_uid || ' [' || slurm_job || ']' "
                      "FROM process_tick WHERE gpu = 0"),
              k_cid + " " + k_pod + " []");
    EXPECT_EQ(raw.one("SELECT DISTINCT '[' || container_id || pod_uid || '] ' || slurm_job FROM "
                      "process_tick WHERE gpu = 1"),
              "[] 42");
    EXPECT_EQ(raw.one("SELECT count(*) FROM identity"), "2");
}

} // namespace
} // namespace gua::e2e
