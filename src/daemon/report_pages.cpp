// SPDX-License-Identifier: Apache-2.0
// Report pages: query → window and filters (as `gua report`), build under a deadline, render.
#include "daemon/report_pages.hpp"

#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "core/printable.hpp"
#include "core/timezone.hpp"
#include "report/render.hpp"
#include "report/window_args.hpp"
#include "store/database.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <map>

namespace gua::daemon {

namespace {

constexpr std::array<std::string_view, 7> k_parameters{"since", "until", "from", "to",
                                                       "gpu",   "user",  "tz"};

/// A one-line text answer (values from the query are shown escaped, never as raw bytes).
exporter::Page text_page(unsigned status, const std::string& line) {
    return exporter::Page{status, "text/plain; charset=utf-8", printable(line) + "\n"};
}

/// What interrupts the report's SQLite work: its deadline or the server stopping.
struct Deadline {
    std::chrono::steady_clock::time_point at;
    const std::atomic<bool>* cancel = nullptr;
    bool expired = false;
};

int check_deadline(void* context) {
    auto* d = static_cast<Deadline*>(context);
    d->expired = d->expired || std::chrono::steady_clock::now() >= d->at;
    return d->expired || d->cancel->load() ? 1 : 0;
}

/// The parameters by name; throws Fatal (usage) for an unknown or repeated one, or a pair that
/// excludes each other (as the command line's flags do).
std::map<std::string, std::string> parameters(const exporter::Query& query) {
    std::map<std::string, std::string> out;
    for (const auto& [key, value] : query) {
        if (std::find(k_parameters.begin(), k_parameters.end(), key) == k_parameters.end()) {
            throw Fatal(fmt::format("unknown parameter '{}' (known: {})", key,
                                    fmt::join(k_parameters, ", ")),
                        ExitCode::usage);
        }
        if (!out.emplace(key, value).second) {
            throw Fatal(fmt::format("{}: given twice", key), ExitCode::usage);
        }
        if (value.empty()) {
            throw Fatal(fmt::format("{}: must not be empty", key), ExitCode::usage);
        }
    }
    for (const auto& [a, b] :
         {std::pair{"from", "since"}, std::pair{"from", "until"}, std::pair{"to", "until"}}) {
        if (out.contains(a) && out.contains(b)) {
            throw Fatal(fmt::format("{} excludes {}", a, b), ExitCode::usage);
        }
    }
    return out;
}

/// The command line's messages name flags ("--gpu 7: no such GPU …"); a query names parameters.
std::string as_parameter(std::string message) {
    if (message.starts_with("--")) {
        message.erase(0, 2);
    }
    return message;
}

} // namespace

exporter::Page report_page(const ReportPagesOptions& options, std::string_view path,
                           const exporter::Query& query, const std::atomic<bool>& cancel) {
    const auto started = std::chrono::steady_clock::now();
    report::BuildOptions b = options.settings;
    std::string tz_name = b.time_zone;
    try {
        const std::map<std::string, std::string> p = parameters(query);
        const auto get = [&p](const char* key) {
            const auto it = p.find(key);
            return it == p.end() ? std::string() : it->second;
        };
        report::WindowArgs window{get("since").empty() ? "7d" : get("since"), get("until"),
                                  get("from"), get("to")};
        report::resolve_window(window, options.now(), b, "");
        if (p.contains("gpu")) {
            b.gpu = get("gpu");
        }
        if (p.contains("user")) {
            b.user = get("user");
        }
        if (p.contains("tz")) {
            tz_name = get("tz");
        }
    } catch (const Fatal& e) {
        return text_page(400, e.what());
    }
    const Result<TimeZone> tz = TimeZone::load(tz_name);
    if (!tz) {
        return text_page(400, "tz: " + tz.error().message);
    }
    Deadline deadline{started + options.timeout, &cancel};
    try {
        store::Database db(options.db_path, store::OpenMode::read_only);
        sqlite3_progress_handler(db.handle(), 100, &check_deadline, &deadline);
        const report::ReportModel m = report::build_report(db, b, tz.value());
        if (check_deadline(&deadline) != 0) {
            throw Fatal("interrupted");
        }
        if (path == "/report.json") {
            return exporter::Page{200, "application/json; charset=utf-8", report::render_json(m)};
        }
        return exporter::Page{200, "text/html; charset=utf-8", report::render_html(m)};
    } catch (const Fatal& e) {
        if (deadline.expired) {
            return text_page(503,
                             fmt::format("the report took longer than {}; try a shorter "
                                         "window",
                                         format_duration(options.timeout.count() * k_us_per_ms)));
        }
        if (cancel.load()) {
            return text_page(503, "the daemon is stopping");
        }
        return text_page(e.code() == ExitCode::usage ? 400 : 500, as_parameter(e.what()));
    }
}

exporter::PageRoutes report_pages(ReportPagesOptions options) {
    return exporter::PageRoutes{{"/", "/report", "/report.json"},
                                [options = std::move(options)](std::string_view path,
                                                               const exporter::Query& query,
                                                               const std::atomic<bool>& cancel) {
                                    return report_page(options, path, query, cancel);
                                }};
}

} // namespace gua::daemon
