// SPDX-License-Identifier: Apache-2.0
// The configured transports: mail (SMTP) and webhooks (Slack, Teams, generic JSON), built from
// [mail] and [webhook.NAME] with their secrets read from files.
#pragma once

#include "config/delivery_settings.hpp"
#include "core/result.hpp"
#include "notify/notice.hpp"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace gua::notify {

/// One way out. Sending blocks for at most the transport's timeout (or until `cancel` is set);
/// safe to call from one thread at a time per transport.
class Transport {
  public:
    Transport(std::string label, config::Audience audience)
        : m_label(std::move(label)), m_audience(audience) {}
    virtual ~Transport() = default;
    Transport(const Transport&) = delete;
    Transport& operator=(const Transport&) = delete;

    /// "smtp" or "webhook.NAME": the /metrics label `transport` and the logs' name.
    const std::string& label() const { return m_label; }
    /// True when it carries `what` (config::Audience::digest or ::policy).
    bool carries(config::Audience what) const { return config::carries(m_audience, what); }
    /// True when it can send `n` (mail needs an address).
    virtual bool takes(const Notice& n) const = 0;
    /// Who gets `n` this way, for --dry-run and logs: an address, or "webhook.NAME (slack,
    /// https://hooks.slack.com/…)". Never a secret.
    virtual std::string target(const Notice& n) const = 0;
    /// Delivers `n` once; an error is one line without secrets.
    virtual Result<void> send(const Notice& n, const std::atomic<bool>* cancel) const = 0;

  private:
    std::string m_label;
    config::Audience m_audience;
};

using TransportList = std::vector<std::shared_ptr<const Transport>>;

/// The transports of `settings`, mail first, then the webhooks in name order. Reads the secret
/// files (password_file, url_file: their first line); throws Fatal (usage) naming the key and
/// file when one cannot be read or is empty, or when a url_file holds no http(s) URL.
TransportList make_transports(const config::DeliverySettings& settings);

/// The first line of `path` (without its line end). An error names `key` and the file.
Result<std::string> read_secret(const std::string& key, const std::string& path);

} // namespace gua::notify
