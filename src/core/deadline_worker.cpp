// SPDX-License-Identifier: Apache-2.0
// DeadlineWorker: one thread, one job at a time, a caller that never waits past its deadline.
#include "core/deadline_worker.hpp"

#include <chrono>
#include <utility>

namespace gua {

DeadlineWorker::~DeadlineWorker() {
    if (!m_thread.joinable()) {
        return;
    }
    bool blocked = false;
    {
        const std::lock_guard lock(m_shared->mutex);
        m_shared->stop = true;
        blocked = m_shared->running || m_shared->pending;
    }
    m_shared->wake.notify_all();
    if (blocked) {
        m_thread.detach(); // it holds its own reference to the shared state
    } else {
        m_thread.join();
    }
}

void DeadlineWorker::loop(const std::shared_ptr<Shared>& shared) {
    std::unique_lock lock(shared->mutex);
    for (;;) {
        shared->wake.wait(lock, [&] { return shared->pending || shared->stop; });
        if (!shared->pending) {
            return;
        }
        std::function<void()> job = std::move(shared->job);
        shared->job = nullptr;
        shared->pending = false;
        shared->running = true;
        lock.unlock();
        try {
            job();
        } catch (...) { // NOLINT(bugprone-empty-catch): a failed job is one that gave nothing
        }
        job = nullptr; // what it holds is released before the caller hears of it
        lock.lock();
        shared->running = false;
        ++shared->finished;
        shared->done.notify_all();
    }
}

bool DeadlineWorker::run(std::function<void()> job, std::int64_t timeout_us) {
    std::unique_lock lock(m_shared->mutex);
    if (m_shared->running || m_shared->pending) {
        return false;
    }
    if (!m_thread.joinable()) {
        m_thread = std::thread([shared = m_shared] { loop(shared); });
    }
    m_shared->job = std::move(job);
    m_shared->pending = true;
    const std::uint64_t ticket = ++m_given;
    m_shared->wake.notify_one();
    const bool in_time = m_shared->done.wait_for(lock, std::chrono::microseconds(timeout_us),
                                                 [&] { return m_shared->finished >= ticket; });
    if (!in_time) {
        ++m_shared->late;
    }
    return in_time;
}

bool DeadlineWorker::busy() const {
    const std::lock_guard lock(m_shared->mutex);
    return m_shared->running || m_shared->pending;
}

std::uint64_t DeadlineWorker::late() const {
    const std::lock_guard lock(m_shared->mutex);
    return m_shared->late;
}

} // namespace gua
