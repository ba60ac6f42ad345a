// SPDX-License-Identifier: Apache-2.0
// A worker thread for calls that may block without end (a stalled network or FUSE file system): the
// caller waits for each job at most a deadline and goes on; a job past it finishes on its own.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace gua {

/// Runs one job at a time on its own thread, started on first use. run() waits for the job at
/// most its timeout; a job still running then is left to finish on the worker, and until it does,
/// busy() is true and run() refuses new jobs at once. A job must own (or share) everything it
/// touches: it may outlive the call that gave it, and even the worker (a worker destroyed while
/// its job is blocked detaches the thread rather than wait for it).
class DeadlineWorker {
  public:
    DeadlineWorker() = default;
    DeadlineWorker(const DeadlineWorker&) = delete;
    DeadlineWorker& operator=(const DeadlineWorker&) = delete;
    ~DeadlineWorker();

    /// Runs `job` on the worker and waits at most `timeout_us` µs for it. True when it finished
    /// in time; false when it did not (it goes on running) or when the worker was still busy with
    /// an earlier job (then `job` is not run at all).
    bool run(std::function<void()> job, std::int64_t timeout_us);
    /// True while a job that missed its deadline is still running.
    bool busy() const;
    /// Jobs that missed their deadline, since construction.
    std::uint64_t late() const;

  private:
    struct Shared {
        mutable std::mutex mutex;
        std::condition_variable wake; ///< the worker: a job or stop
        std::condition_variable done; ///< the caller: a job finished
        std::function<void()> job;
        bool pending = false;       ///< `job` waits for the worker
        bool running = false;       ///< the worker runs a job
        bool stop = false;          ///< the worker ends when idle
        std::uint64_t finished = 0; ///< jobs finished
        std::uint64_t late = 0;
    };
    static void loop(const std::shared_ptr<Shared>& shared);

    std::shared_ptr<Shared> m_shared = std::make_shared<Shared>();
    std::thread m_thread;
    std::uint64_t m_given = 0; ///< jobs handed to the worker
};

} // namespace gua
