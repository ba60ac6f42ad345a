// SPDX-License-Identifier: Apache-2.0
// DeliveryQueue: messages handed to the transports on a thread of their own, retried with
// exponential backoff, bounded (overflow dropped and counted), every failure logged on one line.
#pragma once

#include "notify/transport.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gua::notify {

/// How hard the queue tries.
struct QueueOptions {
    int attempts = 5;                                 ///< tries per message, the first included
    DurationUs backoff_us = 10 * k_us_per_second;     ///< wait before the first retry, doubled
    DurationUs max_backoff_us = 10 * k_us_per_minute; ///< … up to this
    std::size_t capacity = 1000;                      ///< messages waiting at most
    std::function<void(const std::string&)> log;      ///< one line per failure (may be empty)
};

/// Counters of one transport since the queue started.
struct TransportCounts {
    std::string transport; ///< Transport::label()
    std::uint64_t delivered = 0;
    std::uint64_t failed = 0;  ///< given up after the last attempt
    std::uint64_t dropped = 0; ///< refused: the queue was full
    std::uint64_t retries = 0; ///< attempts after a failed one
};

/// The outcome of one message, for callers that wait (gua digest).
struct Outcome {
    std::string transport;
    std::string who;
    bool delivered = false;
    int attempts = 0;
    std::string error; ///< the last attempt's error
};

class DeliveryQueue {
  public:
    /// Starts the delivery thread; `transports` fixes the counters' rows (zeros included).
    DeliveryQueue(QueueOptions options, const TransportList& transports);
    /// Stops: an attempt in flight is cancelled, messages still waiting are logged as lost.
    ~DeliveryQueue();
    DeliveryQueue(const DeliveryQueue&) = delete;
    DeliveryQueue& operator=(const DeliveryQueue&) = delete;

    /// Queues `n` for `t` and returns at once; false (and counted as dropped, logged) when full.
    bool push(std::shared_ptr<const Transport> t, Notice n);
    /// Waits until every queued message is delivered or given up; returns their outcomes in the
    /// order they ended since the last wait.
    std::vector<Outcome> wait_idle();
    /// The counters, one row per transport.
    std::vector<TransportCounts> counts() const;

  private:
    struct Job {
        std::shared_ptr<const Transport> transport;
        Notice notice;
        int attempts = 0;
        std::chrono::steady_clock::time_point due;
    };
    void run();
    /// One send of `job`; an exception (libcurl missing, no memory) becomes its error.
    Result<void> attempt(const Job& job);
    /// Counts the attempt's result and requeues or ends the job; returns the log line ("" when
    /// delivered).
    std::string finish(Job& job, const Result<void>& result);
    TransportCounts& row(const std::string& label);

    QueueOptions m_options;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_idle;
    std::vector<Job> m_jobs;
    bool m_busy = false;
    bool m_stop = false;
    std::atomic<bool> m_cancel{false};
    std::vector<TransportCounts> m_counts;
    std::vector<Outcome> m_outcomes;
    std::thread m_thread;
};

} // namespace gua::notify
