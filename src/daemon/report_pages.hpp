// SPDX-License-Identifier: Apache-2.0
// The daemon's report pages: / (HTML, the last 7 days), /report (HTML) and /report.json for a
// window and filters given as query parameters, computed from the database on the HTTP server's
// worker thread, with a time limit.
#pragma once

#include "export/http_server.hpp"
#include "report/build.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>

namespace gua::daemon {

/// What the pages are computed from.
struct ReportPagesOptions {
    std::string db_path;
    /// Thresholds, prices, energy, health and grouping as `gua report` takes them from gua.toml.
    report::BuildOptions settings;
    std::function<TimeUs()> now;              ///< the daemon's wall clock
    std::chrono::milliseconds timeout{30000}; ///< a page that takes longer is a 503
};

/// Computes the page of `path` ("/", "/report" or "/report.json") for `query`: the parameters
/// since, until, from, to, gpu, user and tz with `gua report`'s meaning and validation. An unknown
/// or repeated parameter or a bad value is a 400 with a one-line error; a page that takes longer
/// than the timeout (or is cancelled) is a 503; a database that cannot be read is a 500.
exporter::Page report_page(const ReportPagesOptions& options, std::string_view path,
                           const exporter::Query& query, const std::atomic<bool>& cancel);

/// The routes of the three pages for the HTTP server.
exporter::PageRoutes report_pages(ReportPagesOptions options);

} // namespace gua::daemon
