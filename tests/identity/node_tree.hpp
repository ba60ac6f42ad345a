// SPDX-License-Identifier: Apache-2.0
// Test helper: a fabricated node in a temporary directory — the kubelet's /var/log/pods and
// /var/log/containers, Docker's data root and a Podman graph root — for identity::NodeNames.
#pragma once

#include "identity/node_names.hpp"
#include "support/temp_dir.hpp"

#include <filesystem>
#include <fstream>
#include <string>

namespace gua::identity::testing {

/// The node's directories under one temporary root (pods/, containers/, docker/, podman/).
class NodeTree {
  public:
    NodeTree() {
        for (const char* dir : {"pods", "containers", "docker/containers", "podman"}) {
            std::filesystem::create_directories(root() + "/" + dir);
        }
    }

    const std::string& root() const { return m_dir.path(); }
    /// NodePaths of this tree.
    NodePaths paths() const {
        return NodePaths{root() + "/pods", root() + "/containers", root() + "/docker",
                         root() + "/podman"};
    }

    /// Creates <pods>/<ns>_<pod>_<uid>/<container>/0.log and returns the pod directory.
    std::string add_pod_container(const std::string& ns, const std::string& pod,
                                  const std::string& uid, const std::string& container) const {
        const std::string dir = root() + "/pods/" + ns + "_" + pod + "_" + uid;
        std::filesystem::create_directories(dir + "/" + container);
        std::ofstream(dir + "/" + container + "/0.log") << "log line\n";
        return dir;
    }
    /// The kubelet's link <containers>/<pod>_<ns>_<container>-<id>.log to the container's 0.log.
    void add_link(const std::string& ns, const std::string& pod, const std::string& uid,
                  const std::string& container, const std::string& id) const {
        std::filesystem::create_symlink(
            root() + "/pods/" + ns + "_" + pod + "_" + uid + "/" + container + "/0.log",
            root() + "/containers/" + pod + "_" + ns + "_" + container + "-" + id + ".log");
    }
    /// Docker's <data-root>/containers/<id>/config.v2.json holding `json`.
    void add_docker(const std::string& id, const std::string& json) const {
        std::filesystem::create_directories(root() + "/docker/containers/" + id);
        std::ofstream(root() + "/docker/containers/" + id + "/config.v2.json") << json;
    }
    /// Podman's <graph root>/overlay-containers/<file> holding `json`.
    void write_podman(const std::string& json, const std::string& file = "containers.json") const {
        std::filesystem::create_directories(root() + "/podman/overlay-containers");
        std::ofstream(root() + "/podman/overlay-containers/" + file) << json;
    }

  private:
    test::TempDir m_dir;
};

} // namespace gua::identity::testing
