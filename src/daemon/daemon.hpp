// SPDX-License-Identifier: Apache-2.0
// The recording daemon: probe the source, lock and open the database, tick until signalled.
#pragma once

#include "alloc/source.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "export/exporter.hpp"
#include "telemetry/device_source.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace gua::daemon {

/// Settings of one daemon run (command line over config file over defaults).
struct DaemonOptions {
    std::string db;
    DurationUs interval_us = 30 * k_us_per_second;
    std::string config_path; ///< reloaded on SIGHUP; empty: defaults
    std::string log_path;    ///< empty: stderr
    bool quiet = false;      ///< no per-tick line
    std::optional<std::uint64_t> max_ticks;
    std::string source_name = "nvml"; ///< recorded in the run table
    /// Prometheus /metrics: off unless exporter.listen is set.
    exporter::ExporterOptions exporter;
    /// The host's allocation sources, crossed with every card-tick (docs/allocations.md); owned
    /// by the caller, outliving run_daemon(). nullptr: none configured, ticks as without them.
    alloc::AllocationSource* allocations = nullptr;
    /// The kernel log read for the driver's Xid lines (docs/faults.md); empty: not read.
    std::string kernel_log = "/dev/kmsg";
};

/// How the daemon obtains its device source. A failure whose message says the driver and library
/// versions mismatch is retried with backoff (a stop signal meanwhile ends the daemon with exit
/// code 0 and no database); any other failure ends the daemon with exit code 3.
using SourceFactory = std::function<Result<std::unique_ptr<telemetry::DeviceSource>>()>;

/// Runs until SIGINT/SIGTERM (or max_ticks) and returns the exit code. The database is created
/// only after the source was opened. Throws Fatal for user errors (lock held, bad config).
int run_daemon(const DaemonOptions& options, const SourceFactory& open_source);

} // namespace gua::daemon
