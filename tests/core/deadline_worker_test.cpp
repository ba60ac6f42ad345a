// SPDX-License-Identifier: Apache-2.0
// DeadlineWorker: a job in time, a job past its deadline (the worker refuses others until it
// ends, then works again), and a worker destroyed while its job is blocked.
#include "core/deadline_worker.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

namespace gua {
namespace deadline_worker_test { // named after the file: unique in a unity batch

using namespace std::chrono_literals;

/// Polls `done` every millisecond for at most 10 s.
template <class F> bool eventually(F done) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) {
            return false;
        }
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

TEST(DeadlineWorker, AJobInTimeIsDoneBeforeRunReturns) {
    DeadlineWorker worker;
    int value = 0;
    for (int i = 1; i <= 100; ++i) {
        ASSERT_TRUE(worker.run([&value, i] { value = i; }, 10'000'000));
        EXPECT_EQ(value, i) << "its effect is visible to the caller";
    }
    EXPECT_FALSE(worker.busy());
    EXPECT_EQ(worker.late(), 0U);
}

TEST(DeadlineWorker, ALateJobBlocksOthersUntilItEnds) {
    DeadlineWorker worker;
    auto release = std::make_shared<std::promise<void>>();
    std::shared_future<void> released = release->get_future().share();
    auto finished = std::make_shared<std::atomic<bool>>(false);
    const auto before = std::chrono::steady_clock::now();
    EXPECT_FALSE(worker.run(
        [released, finished] {
            released.wait();
            *finished = true;
        },
        50'000));
    const auto waited = std::chrono::steady_clock::now() - before;
    EXPECT_GE(waited, 50ms);
    EXPECT_TRUE(worker.busy());
    EXPECT_EQ(worker.late(), 1U);

    bool ran = false;
    EXPECT_FALSE(worker.run([&ran] { ran = true; }, 1'000'000)) << "refused while stalled";
    EXPECT_FALSE(ran) << "a refused job is never run";

    release->set_value();
    ASSERT_TRUE(eventually([&] { return !worker.busy(); }));
    EXPECT_TRUE(finished->load()) << "the late job finished on the worker";
    EXPECT_TRUE(worker.run([&ran] { ran = true; }, 10'000'000));
    EXPECT_TRUE(ran) << "the worker works again";
}

TEST(DeadlineWorker, AWorkerWithABlockedJobIsDestroyedAtOnce) {
    auto release = std::make_shared<std::promise<void>>();
    std::shared_future<void> released = release->get_future().share();
    auto state = std::make_shared<std::atomic<int>>(0);
    {
        DeadlineWorker worker;
        EXPECT_FALSE(worker.run(
            [released, state] {
                released.wait();
                *state = 1; // what the job shares outlives the worker
            },
            1'000));
    } // detaches: a blocked thread is never waited for
    EXPECT_EQ(state->load(), 0);
    release->set_value();
    EXPECT_TRUE(eventually([&] { return state->load() == 1; }));
    EXPECT_TRUE(eventually([&] { return state.use_count() == 1; })) << "the job was released";
}

TEST(DeadlineWorker, AThrowingJobEndsAndTheWorkerGoesOn) {
    DeadlineWorker worker;
    EXPECT_TRUE(worker.run([] { throw std::runtime_error("a failed lookup"); }, 10'000'000));
    int value = 0;
    EXPECT_TRUE(worker.run([&value] { value = 7; }, 10'000'000));
    EXPECT_EQ(value, 7);
}

} // namespace deadline_worker_test
} // namespace gua
