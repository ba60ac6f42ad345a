// SPDX-License-Identifier: Apache-2.0
// Exporter glue: restore, render, publish; health figures kept beside the counters.
#include "export/exporter.hpp"

#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "export/exposition.hpp"
#include "export/restore.hpp"
#include "store/faults.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <sys/stat.h>
#include <vector>

namespace gua::exporter {

namespace {

std::optional<std::int64_t> file_bytes(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        return std::nullopt;
    }
    return static_cast<std::int64_t>(st.st_size);
}

/// What --web-config adds to the endpoint, for the start line (never a secret).
std::string security_note(const WebConfig& web) {
    std::vector<std::string> parts;
    if (web.tls()) {
        parts.emplace_back(web.client_auth == ClientAuth::require_and_verify
                               ? "TLS with verified client certificates"
                               : "TLS");
    }
    if (web.basic_auth()) {
        parts.push_back(fmt::format("basic auth for {} user(s)", web.users.size()));
    }
    if (web.metrics_only) {
        parts.emplace_back("/metrics only");
    }
    return parts.empty() ? "" : fmt::format("{}; ", fmt::join(parts, ", "));
}

} // namespace

Exporter::Exporter(const ExporterOptions& options, MetricsOptions metrics, store::Database& db,
                   const std::function<void(const std::string&)>& log)
    : m_metrics(std::move(metrics)), m_wal_path(db.path() + "-wal") {
    const Result<ListenAddress> address = parse_listen(options.listen);
    if (!address) {
        throw Fatal(address.error().message, ExitCode::usage);
    }
    m_health.started = wall_now();
    const auto t0 = std::chrono::steady_clock::now();
    const Restored restored = restore_from_database(db, m_metrics);
    for (const auto& [key, count] : store::fault_counts(db)) {
        m_metrics.add_faults(key.first, key.second, count);
    }
    const auto took = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - t0);
    m_health.wal_bytes = file_bytes(m_wal_path);
    m_metrics.set_health(m_health);
    m_server = std::make_unique<HttpServer>(address.value(), options.limits, k_content_type,
                                            options.pages, options.web);
    m_server->publish(m_metrics.render());
    log(fmt::format(
        "serving Prometheus metrics on {} ({}counters restored from {} card-ticks in {})",
        m_server->url(), security_note(options.web), restored.card_ticks,
        format_duration(std::max<DurationUs>(took.count(), k_us_per_ms))));
    if (!options.pages.paths.empty() && !options.web.metrics_only) {
        log(fmt::format("serving the report on {} ({}; one at a time)", m_server->url("/"),
                        fmt::join(options.pages.paths, ", ")));
    }
    if (!restored.bad_blocks.empty()) {
        log(fmt::format("{}: {} malformed tick block(s) left out of the restored counters (ids "
                        "{}); `gua db check` names them",
                        db.path(), restored.bad_blocks.size(),
                        fmt::join(restored.bad_blocks.begin(),
                                  restored.bad_blocks.begin() +
                                      static_cast<std::ptrdiff_t>(
                                          std::min<std::size_t>(restored.bad_blocks.size(), 10)),
                                  ", ")));
    }
}

void Exporter::on_tick(const telemetry::Tick& tick, bool stored,
                       std::uint64_t db_write_errors) noexcept {
    try {
        if (stored) {
            m_metrics.observe(tick);
        } else {
            m_metrics.observe_readings(tick);
        }
        ++m_health.ticks;
        m_health.db_write_errors = db_write_errors;
        for (const telemetry::CardTickRecord& c : tick.cards) {
            m_health.device_read_errors += static_cast<std::uint64_t>(std::max(c.read_errors, 0));
        }
        m_health.last_tick_end = tick.t0 + tick.duration_us;
        m_health.wal_bytes = file_bytes(m_wal_path);
        if (m_deliveries) {
            m_health.deliveries = m_deliveries();
        }
        m_metrics.set_health(m_health);
        m_server->publish(m_metrics.render());
    } catch (...) {
        // Out of memory while rendering: scrapes keep the previous exposition.
    }
}

void Exporter::on_fault(const std::string& uuid, int xid) noexcept {
    try {
        m_metrics.add_faults(uuid, xid, 1);
    } catch (...) { // out of memory: the counter misses one event
    }
}

std::unique_ptr<Exporter> start_exporter(const ExporterOptions& options, store::Database& db,
                                         const audit::Thresholds& thresholds,
                                         const std::string& driver_version, DurationUs interval_us,
                                         const std::function<void(const std::string&)>& log) {
    if (options.listen.empty()) {
        return nullptr;
    }
    MetricsOptions m;
    m.thresholds = thresholds;
    m.max_users = options.max_users;
    m.price_per_gpu_hour = options.price_per_gpu_hour;
    m.pricing = options.pricing;
    m.driver_version = driver_version;
    m.interval_us = interval_us;
    const Result<TimeZone> zone = TimeZone::load(options.time_zone);
    if (!zone) {
        throw Fatal("[report] time_zone: " + zone.error().message, ExitCode::usage);
    }
    m.time_zone = zone.value();
    return std::make_unique<Exporter>(options, std::move(m), db, log);
}

} // namespace gua::exporter
