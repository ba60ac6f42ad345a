// SPDX-License-Identifier: Apache-2.0
// Query planning for fleet reports: which requests to send a Prometheus server so that none
// exceeds its limits (--query.max-samples, 11,000 points per series, --query.timeout), as pure
// functions of the window and the fleet's shape.
#pragma once

#include "core/time.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gua::report {

/// What a plan keeps each request within, with headroom under Prometheus's defaults.
struct PromLimits {
    /// Points per series of one query_range (the server refuses more than 11,000).
    std::int64_t max_points = 10000;
    /// Samples one query holds at once (the server's --query.max-samples is 50,000,000).
    std::int64_t max_peak_samples = 10000000;
    /// Samples one query reads from storage: at the 10–50 million a second one core of a server
    /// decodes, a request stays far inside the default --query.timeout of 2 minutes.
    std::int64_t max_read_samples = 50000000;
    /// Hosts named in one selector (bounds the size of a request and of its answer).
    std::size_t max_hosts = 50;
    /// Requests in flight at once.
    std::size_t concurrency = 4;
};

/// What a plan knows about the fleet: how many hosts, the most series one host has in the
/// families a query reads, and the shortest interval between two samples of a series.
struct FleetShape {
    std::size_t hosts = 0;
    std::int64_t series_per_host = 0;
    DurationUs sample_interval_us = 0;
};

/// One request of a plan: hosts [first_host, first_host + hosts) of the fleet's list, and
/// (start, end]: the range a range function reads, the steps of a query_range, or (start ==
/// end) the time of an instant lookup.
struct PlannedRequest {
    std::size_t first_host = 0;
    std::size_t hosts = 0;
    TimeUs start = 0;
    TimeUs end = 0;
    friend bool operator==(const PlannedRequest&, const PlannedRequest&) = default;
};

/// Samples a series holds in a span of `span_us` at one sample per `interval_us` (at least 1).
std::int64_t samples_in(DurationUs span_us, DurationUs interval_us);

/// Instant queries of a range function (`increase(m[…])`) over (from, to] for every host: host
/// batches reading at most max_read_samples each, and, when one host alone reads more (or one
/// series holds more than max_peak_samples), consecutive time slices of (from, to] per host.
std::vector<PlannedRequest> plan_scan(const FleetShape& shape, TimeUs from, TimeUs to,
                                      const PromLimits& limits);

/// query_range requests of an instant-vector expression at start, start + step, … ≤ end for
/// every host: slices of at most max_points steps (each slice's start is a step of the whole),
/// and host batches whose peak (series × steps) and read (series × samples) stay in the limits;
/// with several requests in flight, at least 4 × concurrency batches when there are hosts
/// enough (so that the requests in flight end close together).
std::vector<PlannedRequest> plan_range(const FleetShape& shape, TimeUs start, TimeUs end,
                                       DurationUs step, const PromLimits& limits);

/// Instant lookups of the latest sample at `at` for every host, in batches of max_hosts (and
/// fewer when their series would exceed max_peak_samples).
std::vector<PlannedRequest> plan_lookup(const FleetShape& shape, TimeUs at,
                                        const PromLimits& limits);

/// The boundaries of (from, to] cut every `chunk`: from, from + chunk, …, to (the last chunk may
/// be shorter; a chunk of 0 or more than the window gives {from, to}).
std::vector<TimeUs> chunk_bounds(TimeUs from, TimeUs to, DurationUs chunk);

/// A PromQL label matcher selecting exactly `values`: `label=~"a|b"` with regular-expression
/// metacharacters and quotes escaped (`label="a"` for one value).
std::string label_matcher(const std::string& label, std::span<const std::string> values);

} // namespace gua::report
