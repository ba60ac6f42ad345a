// SPDX-License-Identifier: Apache-2.0
// The gRPC client of the kubelet's v1.PodResourcesLister/List on a unix socket: the whole of the
// gua-kubelet.so module, loaded by gua only when [allocations] kubelet_socket is set.
#include "alloc/kubelet_source.hpp"
#include "podresources_v1.grpc.pb.h"

#include <chrono>
#include <grpcpp/grpcpp.h>

namespace gua::alloc {

class GrpcPodResourcesClient final : public PodResourcesClient {
  public:
    GrpcPodResourcesClient(std::string socket_path, DurationUs timeout_us)
        : m_socket_path(std::move(socket_path)), m_timeout_us(timeout_us),
          m_stub(v1::PodResourcesLister::NewStub(
              grpc::CreateChannel("unix://" + m_socket_path, grpc::InsecureChannelCredentials()))) {
    }

    Result<std::vector<PodDevices>> list() override {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() +
                             std::chrono::microseconds(m_timeout_us));
        v1::ListPodResourcesResponse response;
        const grpc::Status status =
            m_stub->List(&context, v1::ListPodResourcesRequest{}, &response);
        if (!status.ok()) {
            return Error{"kubelet pod-resources " + m_socket_path + ": " + status.error_message()};
        }
        std::vector<PodDevices> out;
        for (const v1::PodResources& pod : response.pod_resources()) {
            for (const v1::ContainerResources& container : pod.containers()) {
                for (const v1::ContainerDevices& devices : container.devices()) {
                    out.push_back({pod.namespace_(),
                                   pod.name(),
                                   container.name(),
                                   devices.resource_name(),
                                   {devices.device_ids().begin(), devices.device_ids().end()}});
                }
            }
        }
        return out;
    }

  private:
    std::string m_socket_path;
    DurationUs m_timeout_us;
    std::unique_ptr<v1::PodResourcesLister::Stub> m_stub;
};

} // namespace gua::alloc

extern "C" gua::alloc::PodResourcesClient* gua_kubelet_make_client(const char* socket_path,
                                                                   std::int64_t timeout_us) {
    return new gua::alloc::GrpcPodResourcesClient(socket_path, timeout_us);
}
