// SPDX-License-Identifier: Apache-2.0
// The delivery thread: earliest-due message first, backoff doubling per failed attempt.
#include "notify/queue.hpp"

#include "core/duration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace gua::notify {

DeliveryQueue::DeliveryQueue(QueueOptions options, const TransportList& transports)
    : m_options(std::move(options)) {
    for (const auto& t : transports) {
        row(t->label());
    }
    m_thread = std::thread([this] { run(); });
}

DeliveryQueue::~DeliveryQueue() {
    std::size_t lost = 0;
    {
        const std::lock_guard lock(m_mutex);
        m_stop = true;
        m_cancel = true;
        lost = m_jobs.size();
    }
    m_wake.notify_all();
    m_thread.join();
    if (lost > 0 && m_options.log) {
        m_options.log(fmt::format("delivery: stopping with {} message{} not delivered", lost,
                                  lost == 1 ? "" : "s"));
    }
}

TransportCounts& DeliveryQueue::row(const std::string& label) {
    const auto it = std::find_if(m_counts.begin(), m_counts.end(),
                                 [&](const TransportCounts& c) { return c.transport == label; });
    if (it != m_counts.end()) {
        return *it;
    }
    m_counts.push_back(TransportCounts{label});
    return m_counts.back();
}

bool DeliveryQueue::push(std::shared_ptr<const Transport> t, Notice n) {
    std::string dropped;
    {
        const std::lock_guard lock(m_mutex);
        if (m_jobs.size() + (m_busy ? 1 : 0) >= m_options.capacity) {
            ++row(t->label()).dropped;
            dropped = fmt::format("delivery: {} for {} dropped: {} messages already waiting",
                                  t->label(), n.who, m_jobs.size());
        } else {
            m_jobs.push_back(Job{std::move(t), std::move(n), 0, std::chrono::steady_clock::now()});
        }
    }
    if (!dropped.empty()) {
        if (m_options.log) {
            m_options.log(dropped);
        }
        return false;
    }
    m_wake.notify_one();
    return true;
}

void DeliveryQueue::run() {
    std::unique_lock lock(m_mutex);
    while (!m_stop) {
        if (m_jobs.empty()) {
            m_idle.notify_all();
            m_wake.wait(lock);
            continue;
        }
        const auto next = std::min_element(
            m_jobs.begin(), m_jobs.end(), [](const Job& a, const Job& b) { return a.due < b.due; });
        if (next->due > std::chrono::steady_clock::now()) {
            m_wake.wait_until(lock, next->due);
            continue;
        }
        Job job = std::move(*next);
        m_jobs.erase(next);
        m_busy = true;
        lock.unlock();
        ++job.attempts;
        const Result<void> result = attempt(job);
        lock.lock();
        const std::string line = finish(job, result);
        if (!line.empty() && m_options.log) {
            lock.unlock(); // the log may block on its file: not under the lock push() takes
            m_options.log(line);
            lock.lock();
        }
        m_busy = false;
    }
}

Result<void> DeliveryQueue::attempt(const Job& job) {
    try {
        return job.transport->send(job.notice, &m_cancel);
    } catch (const std::exception& e) { // libcurl not installed, out of memory
        return Error{e.what()};
    }
}

std::string DeliveryQueue::finish(Job& job, const Result<void>& result) {
    TransportCounts& c = row(job.transport->label());
    if (result) {
        ++c.delivered;
        m_outcomes.push_back(Outcome{c.transport, job.notice.who, true, job.attempts, ""});
        return {};
    }
    std::string line;
    if (job.attempts < m_options.attempts && !m_stop) {
        const DurationUs wait = std::min<DurationUs>(
            m_options.max_backoff_us, m_options.backoff_us << std::min(job.attempts - 1, 30));
        ++c.retries;
        line = fmt::format("delivery: {} for {}: attempt {} of {} failed: {}; retrying in {}",
                           c.transport, job.notice.who, job.attempts, m_options.attempts,
                           result.error().message, format_duration(wait));
        job.due = std::chrono::steady_clock::now() + std::chrono::microseconds(wait);
        m_jobs.push_back(std::move(job));
    } else {
        ++c.failed;
        line = fmt::format("delivery: {} for {}: failed after {} attempt{}: {}", c.transport,
                           job.notice.who, job.attempts, job.attempts == 1 ? "" : "s",
                           result.error().message);
        m_outcomes.push_back(
            Outcome{c.transport, job.notice.who, false, job.attempts, result.error().message});
    }
    return line;
}

std::vector<Outcome> DeliveryQueue::wait_idle() {
    std::unique_lock lock(m_mutex);
    m_idle.wait(lock, [this] { return (m_jobs.empty() && !m_busy) || m_stop; });
    return std::exchange(m_outcomes, {});
}

std::vector<TransportCounts> DeliveryQueue::counts() const {
    const std::lock_guard lock(m_mutex);
    return m_counts;
}

} // namespace gua::notify
