// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: answers of a Prometheus server, through the client's parsing, both fleet
// report builders (gua's counters and dcgm-exporter's gauges) and both renderers. Input: the
// bodies of successive answers separated by the byte 0xFF, served in turn (and again from the
// first when the report asks for more); each answer is also parsed alone as a query's and as a
// label list's. fuzz/run.sh gives this target inputs up to 1 MiB, and its seeds include
// answers of hundreds of series and labels near the size limit.
#include "core/fatal.hpp"
#include "fleet/fleet.hpp"
#include "prometheus/answer.hpp"
#include "report/render.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

std::vector<std::string> answers_of(std::string_view text) {
    std::vector<std::string> out;
    for (;;) {
        const std::size_t sep = text.find('\xff');
        out.emplace_back(text.substr(0, sep));
        if (sep == std::string_view::npos) {
            return out;
        }
        text.remove_prefix(sep + 1);
    }
}

void build_and_render(const std::vector<std::string>& answers, const std::string& source) {
    std::size_t next = 0;
    gua::report::PrometheusClient prom(
        "http://prometheus.invalid:9090",
        [&](const std::string&, const std::vector<std::pair<std::string, std::string>>&) {
            return gua::report::PromAnswer{200, answers[next++ % answers.size()]};
        });
    gua::report::FleetOptions fleet;
    fleet.url = prom.url();
    fleet.source = source;
    gua::report::BuildOptions options;
    options.from = 1767225600LL * gua::k_us_per_second; // 2026-01-01T00:00:00Z
    options.to = options.from + gua::k_us_per_day;
    options.window_label = "1d";
    const gua::Result<gua::TimeZone> tz = gua::TimeZone::load("UTC");
    try {
        const gua::report::ReportModel m =
            source == "dcgm"
                ? gua::report::build_dcgm_report(prom, fleet, options, tz.value())
                : gua::report::build_prometheus_report(prom, fleet, options, tz.value());
        volatile std::size_t sink = gua::report::render_text(m, {}).size();
        sink = sink + gua::report::render_json(m).size();
    } catch (const gua::Fatal&) {
        // a one-line error naming the server: what `gua report --prometheus` prints
    }
}

} // namespace

// libFuzzer's and the sanitizers' own memory is most of this process's resident set: the fleet
// report's memory limit would stop every input at its first check.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
    setenv("GUA_PROMETHEUS_MAX_RSS_MB", "1000000", 1);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::vector<std::string> answers =
        answers_of(std::string_view(reinterpret_cast<const char*>(data), size));
    for (const std::string& body : answers) {
        const gua::report::PromAnswer answer{200, body};
        try {
            std::size_t points = 0;
            gua::report::parse_answer(
                answer, "http://prometheus.invalid:9090",
                [&](gua::report::PromLabels&, std::vector<std::pair<gua::TimeUs, double>>& p) {
                    points += p.size();
                });
            volatile std::size_t sink = points;
            (void)sink;
        } catch (const gua::Fatal&) {
        }
        try {
            volatile std::size_t sink =
                gua::report::parse_label_values(answer, "http://prometheus.invalid:9090").size();
            (void)sink;
        } catch (const gua::Fatal&) {
        }
    }
    build_and_render(answers, "gua");
    build_and_render(answers, "dcgm");
    return 0;
}
