// SPDX-License-Identifier: Apache-2.0
// Exporter: what the daemon runs when --listen is given — restored counters plus /metrics, and the
// report pages the daemon adds.
#pragma once

#include "audit/card_tick.hpp"
#include "audit/cost.hpp"
#include "export/http_server.hpp"
#include "export/metrics.hpp"
#include "store/database.hpp"
#include "telemetry/tick.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace gua::exporter {

/// The daemon's exporter settings (command line).
struct ExporterOptions {
    std::string listen;                       ///< --listen; empty: no exporter
    std::optional<double> price_per_gpu_hour; ///< dollars for every model; overrides pricing
    std::optional<audit::Pricing> pricing;    ///< gua.toml [pricing]; no dollar counters without
                                              ///< either
    std::size_t max_users = 20;               ///< users with their own label
    std::string time_zone = "UTC";            ///< [report] time_zone: office hours of the pools
    HttpLimits limits;
    PageRoutes pages; ///< computed pages served beside /metrics (the daemon's report)
    WebConfig web;    ///< --web-config: TLS, client certificates, basic auth, metrics-only
};

/// Feeds the metrics tick by tick and publishes each rendering to the HTTP server.
class Exporter {
  public:
    /// Restores the counters from `db`, renders them once, then starts serving. `log` gets one
    /// line saying where and what was restored. Throws Fatal for a bad or busy address.
    Exporter(const ExporterOptions& options, MetricsOptions metrics, store::Database& db,
             const std::function<void(const std::string&)>& log);
    /// Adds `tick` to the counters when it was `stored` (else only its readings), updates the
    /// health figures (`db_write_errors`: ticks not stored so far) and publishes the new
    /// exposition. Never throws.
    void on_tick(const telemetry::Tick& tick, bool stored, std::uint64_t db_write_errors) noexcept;
    /// Counts one stored driver fault (gua_gpu_xid_events_total); published with the next tick.
    void on_fault(const std::string& uuid, int xid) noexcept;
    /// Where the delivery counters come from (read at each tick); unset: no delivery series.
    void count_deliveries(std::function<std::vector<DeliveryCounts>()> source) {
        m_deliveries = std::move(source);
    }
    /// Counts a tick that started more than an interval late.
    void on_overrun() noexcept { ++m_health.overruns; }
    /// The server (its url and port).
    const HttpServer& server() const { return *m_server; }

  private:
    Metrics m_metrics;
    Health m_health;
    std::string m_wal_path;
    std::unique_ptr<HttpServer> m_server;
    std::function<std::vector<DeliveryCounts>()> m_deliveries;
};

/// Starts an Exporter when `options.listen` is set, else returns nullptr. Throws Fatal (usage) for
/// an unknown time zone.
std::unique_ptr<Exporter> start_exporter(const ExporterOptions& options, store::Database& db,
                                         const audit::Thresholds& thresholds,
                                         const std::string& driver_version, DurationUs interval_us,
                                         const std::function<void(const std::string&)>& log);

} // namespace gua::exporter
