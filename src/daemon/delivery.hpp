// SPDX-License-Identifier: Apache-2.0
// The daemon's side of delivery: the transports of [mail] and [webhook.NAME] that carry policy
// notifications, their queue (its own thread), and the counters /metrics shows.
#pragma once

#include "config/config.hpp"
#include "export/metrics.hpp"
#include "notify/queue.hpp"
#include "policy/engine.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gua::daemon {

class PolicyDelivery {
  public:
    /// Reads the secrets and starts the queue when a transport carries policy messages (else
    /// does nothing). Throws Fatal (usage) for an unreadable secret file.
    PolicyDelivery(const config::Config& cfg, std::string host,
                   std::function<void(const std::string&)> log);
    /// The policy runner's hook: queues the decision's notice for each transport that takes it.
    /// Empty when no transport carries policy messages.
    std::function<void(const policy::Decision&)> hook();
    /// The queue's counters for /metrics (none without transports).
    std::vector<exporter::DeliveryCounts> counts() const;

  private:
    notify::TransportList m_transports;
    std::map<std::string, std::string> m_recipients;
    std::string m_domain;
    std::string m_host;
    std::unique_ptr<notify::DeliveryQueue> m_queue;
};

} // namespace gua::daemon
