// SPDX-License-Identifier: Apache-2.0
// Policy notifications handed to the delivery queue; its counters for /metrics.
#include "daemon/delivery.hpp"

#include "notify/notices.hpp"

namespace gua::daemon {

PolicyDelivery::PolicyDelivery(const config::Config& cfg, std::string host,
                               std::function<void(const std::string&)> log)
    : m_recipients(cfg.digest.recipients),
      m_domain(cfg.delivery.mail ? cfg.delivery.mail->domain : std::string()),
      m_host(std::move(host)) {
    for (auto& t : notify::make_transports(cfg.delivery)) {
        if (t->carries(config::Audience::policy)) {
            m_transports.push_back(std::move(t));
        }
    }
    if (m_transports.empty()) {
        return;
    }
    notify::QueueOptions o;
    o.attempts = cfg.delivery.attempts;
    o.backoff_us = cfg.delivery.backoff_us;
    o.max_backoff_us = cfg.delivery.max_backoff_us;
    o.capacity = cfg.delivery.queue;
    o.log = std::move(log);
    std::string names;
    for (const auto& t : m_transports) {
        names += (names.empty() ? "" : ", ") + t->label();
    }
    o.log("gua daemon: policy notifications also go to " + names);
    m_queue = std::make_unique<notify::DeliveryQueue>(std::move(o), m_transports);
}

std::function<void(const policy::Decision&)> PolicyDelivery::hook() {
    if (!m_queue) {
        return {};
    }
    return [this](const policy::Decision& d) {
        const notify::Notice n = notify::policy_notice(d, m_host, m_recipients, m_domain);
        for (const auto& t : m_transports) {
            if (t->takes(n)) {
                m_queue->push(t, n);
            }
        }
    };
}

std::vector<exporter::DeliveryCounts> PolicyDelivery::counts() const {
    std::vector<exporter::DeliveryCounts> out;
    if (m_queue) {
        for (const notify::TransportCounts& c : m_queue->counts()) {
            out.push_back({c.transport, c.delivered, c.failed, c.dropped, c.retries});
        }
    }
    return out;
}

} // namespace gua::daemon
