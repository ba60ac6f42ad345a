// SPDX-License-Identifier: Apache-2.0
// Host batches and time slices that keep each Prometheus request within the server's limits.
#include "prometheus/plan.hpp"

#include <algorithm>

namespace gua::report {

namespace {

/// Lookback of an instant vector selector (Prometheus's --query.lookback-delta default): a
/// lookup reads this much before its time.
constexpr DurationUs k_lookback_us = 5 * k_us_per_minute;

std::int64_t at_least_one_of(std::int64_t n) {
    return std::max<std::int64_t>(n, 1);
}

std::vector<PlannedRequest> batch_requests(std::size_t hosts, std::size_t per_batch, TimeUs start,
                                           TimeUs end) {
    std::vector<PlannedRequest> out;
    for (std::size_t first = 0; first < hosts; first += per_batch) {
        out.push_back(PlannedRequest{first, std::min(per_batch, hosts - first), start, end});
    }
    return out;
}

} // namespace

std::int64_t samples_in(DurationUs span_us, DurationUs interval_us) {
    return std::max<DurationUs>(span_us, 0) / std::max<DurationUs>(interval_us, 1) + 1;
}

std::vector<PlannedRequest> plan_scan(const FleetShape& shape, TimeUs from, TimeUs to,
                                      const PromLimits& limits) {
    const std::int64_t series = at_least_one_of(shape.series_per_host);
    const DurationUs interval = std::max<DurationUs>(shape.sample_interval_us, 1);
    const std::int64_t per_series = samples_in(to - from, interval);
    const std::int64_t per_host = series * per_series;
    if (per_host <= limits.max_read_samples && per_series <= limits.max_peak_samples) {
        const auto per_batch = static_cast<std::size_t>(std::min<std::int64_t>(
            static_cast<std::int64_t>(limits.max_hosts), limits.max_read_samples / per_host));
        return batch_requests(shape.hosts, std::max<std::size_t>(per_batch, 1), from, to);
    }
    // One host alone reads too much: slices of the window, each within both limits.
    const std::int64_t samples =
        std::min(limits.max_read_samples / series, limits.max_peak_samples);
    const DurationUs slice = std::max<DurationUs>((samples - 1) * interval, interval);
    std::vector<PlannedRequest> out;
    for (std::size_t h = 0; h < shape.hosts; ++h) {
        for (TimeUs a = from; a < to; a += slice) {
            out.push_back(PlannedRequest{h, 1, a, std::min(to, a + slice)});
        }
    }
    return out;
}

std::vector<PlannedRequest> plan_range(const FleetShape& shape, TimeUs start, TimeUs end,
                                       DurationUs step, const PromLimits& limits) {
    const std::int64_t series = at_least_one_of(shape.series_per_host);
    const DurationUs interval = std::max<DurationUs>(shape.sample_interval_us, 1);
    step = std::max<DurationUs>(step, 1);
    // The most steps one host's request may have: every series holds a point per step, and
    // reads every sample of the slice (plus the lookback before its first step).
    const std::int64_t readable = limits.max_read_samples / series - 1;
    const std::int64_t by_read = (readable * interval - k_lookback_us) / step + 1;
    const std::int64_t slice_steps = at_least_one_of(std::min(
        {limits.max_points, limits.max_peak_samples / series, std::max<std::int64_t>(by_read, 1)}));
    const std::int64_t total_steps = (end - start) / step + 1;
    const std::int64_t steps = std::min(slice_steps, total_steps);
    const std::int64_t read = series * samples_in((steps - 1) * step + k_lookback_us, interval);
    // At least 4 batches per request in flight when several are (and there are hosts enough):
    // the last ones to finish are then small.
    const auto hosts = static_cast<std::int64_t>(shape.hosts);
    const auto spread =
        static_cast<std::int64_t>(limits.concurrency > 1 ? 4 * limits.concurrency : 1);
    const std::int64_t per_batch = std::min(
        {static_cast<std::int64_t>(limits.max_hosts), limits.max_peak_samples / (series * steps),
         limits.max_read_samples / read, (hosts + spread - 1) / spread});
    std::vector<PlannedRequest> out;
    for (const PlannedRequest& b : batch_requests(
             shape.hosts, static_cast<std::size_t>(at_least_one_of(per_batch)), start, end)) {
        for (std::int64_t k = 0; k < total_steps; k += slice_steps) {
            const TimeUs a = start + k * step;
            out.push_back(PlannedRequest{b.first_host, b.hosts, a,
                                         std::min(end, a + (slice_steps - 1) * step)});
        }
    }
    return out;
}

std::vector<PlannedRequest> plan_lookup(const FleetShape& shape, TimeUs at,
                                        const PromLimits& limits) {
    const std::int64_t series = at_least_one_of(shape.series_per_host);
    const std::int64_t per_batch =
        std::min(static_cast<std::int64_t>(limits.max_hosts), limits.max_peak_samples / series);
    return batch_requests(shape.hosts, static_cast<std::size_t>(at_least_one_of(per_batch)), at,
                          at);
}

std::vector<TimeUs> chunk_bounds(TimeUs from, TimeUs to, DurationUs chunk) {
    std::vector<TimeUs> out{from};
    if (chunk > 0) {
        for (TimeUs t = from + chunk; t < to; t += chunk) {
            out.push_back(t);
        }
    }
    out.push_back(to);
    return out;
}

std::string label_matcher(const std::string& label, std::span<const std::string> values) {
    // A PromQL string: backslash, quote and newline escaped; in a regular expression also
    // RE2's metacharacters, each with a backslash that the string itself must escape.
    const auto quoted = [](const std::string& v, bool regex) {
        std::string out;
        for (const char c : v) {
            if (regex && c == '\\') {
                out += "\\\\\\\\";
            } else if (regex &&
                       std::string_view(".+*?()|[]{}^$").find(c) != std::string_view::npos) {
                out += "\\\\";
                out += c;
            } else if (c == '\\' || c == '"') {
                out += '\\';
                out += c;
            } else if (c == '\n') {
                out += "\\n";
            } else {
                out += c;
            }
        }
        return out;
    };
    if (values.size() == 1) {
        return label + "=\"" + quoted(values.front(), false) + "\"";
    }
    std::string out = label + "=~\"";
    for (std::size_t i = 0; i < values.size(); ++i) {
        out += (i > 0 ? "|" : "") + quoted(values[i], true);
    }
    return out + "\"";
}

} // namespace gua::report
