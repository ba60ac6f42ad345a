// SPDX-License-Identifier: Apache-2.0
// A kubelet's pod-resources service for the tests (the same .proto as gua's client), answering
// from a pod list the test changes and noting when it served each version of the list.
#pragma once

#include "core/time.hpp"
#include "podresources_v1.grpc.pb.h"

#include <grpcpp/grpcpp.h>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace gua::alloc::fake_kubelet {

struct FakePod {
    std::string pod_namespace;
    std::string name;
    std::string resource;
    std::vector<std::string> device_ids;
};

class FakeLister final : public v1::PodResourcesLister::Service {
  public:
    /// Serves `pods` from the next List on (version number `version()` + 1).
    void set(std::vector<FakePod> pods) {
        const std::lock_guard lock(m_mutex);
        m_pods = std::move(pods);
        ++m_version;
    }
    /// The version of the list set last (0: the first set()).
    int version() const {
        const std::lock_guard lock(m_mutex);
        return m_version;
    }
    /// Each List answered: when (wall clock, as the call arrived) and the version it served.
    std::vector<std::pair<TimeUs, int>> served() const {
        const std::lock_guard lock(m_mutex);
        return m_served;
    }
    grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                      v1::ListPodResourcesResponse* response) override {
        const std::lock_guard lock(m_mutex);
        m_served.emplace_back(wall_now(), m_version);
        for (const FakePod& pod : m_pods) {
            v1::PodResources* out = response->add_pod_resources();
            out->set_name(pod.name);
            out->set_namespace_(pod.pod_namespace);
            v1::ContainerResources* container = out->add_containers();
            container->set_name("main");
            v1::ContainerDevices* devices = container->add_devices();
            devices->set_resource_name(pod.resource);
            for (const std::string& id : pod.device_ids) {
                devices->add_device_ids(id);
            }
        }
        return grpc::Status::OK;
    }

  private:
    mutable std::mutex m_mutex;
    std::vector<FakePod> m_pods;
    int m_version = -1;
    std::vector<std::pair<TimeUs, int>> m_served;
};

/// A gRPC server of `lister` on the unix socket `socket`; nullptr when it cannot listen.
inline std::unique_ptr<grpc::Server> serve(FakeLister& lister, const std::string& socket) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
    builder.RegisterService(&lister);
    return builder.BuildAndStart();
}

} // namespace gua::alloc::fake_kubelet
