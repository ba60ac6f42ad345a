// SPDX-License-Identifier: Apache-2.0
// Fleet flags and printing for `gua report --prometheus`.
#include "cli/report_fleet.hpp"

#include "cli/validators.hpp"
#include "core/duration.hpp"
#include "core/fatal.hpp"

#include <CLI/CLI.hpp>

namespace gua::cli {

void add_fleet_flags(CLI::App& cmd, report::FleetOptions& fleet) {
    CLI::Option* url =
        cmd.add_option("--prometheus", fleet.url,
                       "Report the fleet a Prometheus server scrapes (its root URL, e.g. "
                       "http://127.0.0.1:9090) instead of a database")
            ->check(non_empty());
    cmd.add_option("--source", fleet.source,
                   "With --prometheus: gua (gua daemons' counters) or dcgm (dcgm-exporter gauges)")
        ->check(CLI::IsMember({"gua", "dcgm"}))
        ->capture_default_str()
        ->needs(url);
    cmd.add_option("--host-label", fleet.host_label,
                   "With --prometheus: the label that names a host")
        ->check(prometheus_label_name())
        ->capture_default_str()
        ->needs(url);
    cmd.add_option_function<std::string>(
           "--step",
           [&fleet](const std::string& text) {
               const Result<DurationUs> d = parse_duration(text);
               if (!d) {
                   throw CLI::ValidationError("--step", d.error().message);
               }
               fleet.step_us = d.value();
           },
           "With --source dcgm: sampling step of the gauges (default 15s)")
        ->needs(url);
    add_positive_duration(
        cmd, "--prometheus-timeout", fleet.timeout_us,
        "With --prometheus: the longest the whole report may wait for the server (default "
        "10m; each request at most 1m)")
        ->needs(url);
}

int print_fleet_report(const report::FleetOptions& fleet, const report::BuildOptions& options,
                       const ReportFlags& flags) {
    const TimeZone tz = report_zone(options);
    report::BuildOptions o = options;
    o.top_identities = flags.top;
    report::PrometheusClient prom(fleet.url, fleet.timeout_us);
    const report::ReportModel model = fleet.source == "dcgm"
                                          ? report::build_dcgm_report(prom, fleet, o, tz)
                                          : report::build_prometheus_report(prom, fleet, o, tz);
    return print_model(model, flags);
}

} // namespace gua::cli
