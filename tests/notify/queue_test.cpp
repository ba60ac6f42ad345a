// SPDX-License-Identifier: Apache-2.0
// DeliveryQueue with an in-process transport: retries until delivered or given up, backoff
// doubling between attempts, a full queue drops and counts, push never waits on a send.
#include "notify/queue.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>

namespace gua::notify {
namespace queue_test { // named after the file: unique in a unity batch

using Clock = std::chrono::steady_clock;

/// Fails its first `failures` sends; each send takes `hold`. Records when each started.
class Scripted final : public Transport {
  public:
    Scripted(int failures, std::chrono::milliseconds hold)
        : Transport("webhook.test", config::Audience::both), m_failures(failures), m_hold(hold) {}
    bool takes(const Notice&) const override { return true; }
    std::string target(const Notice&) const override { return "test"; }
    Result<void> send(const Notice&, const std::atomic<bool>* cancel) const override {
        std::size_t n = 0;
        {
            const std::lock_guard lock(m_mutex);
            m_starts.push_back(Clock::now());
            n = m_starts.size();
        }
        const auto until = Clock::now() + m_hold;
        while (Clock::now() < until && !cancel->load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        if (static_cast<int>(n) <= m_failures) {
            return Error{"HTTP 503"};
        }
        return {};
    }
    std::vector<Clock::time_point> starts() const {
        const std::lock_guard lock(m_mutex);
        return m_starts;
    }

  private:
    int m_failures;
    std::chrono::milliseconds m_hold;
    mutable std::mutex m_mutex;
    mutable std::vector<Clock::time_point> m_starts;
};

Notice notice(const std::string& who) {
    Notice n;
    n.event = "digest";
    n.who = who;
    return n;
}

double seconds(Clock::duration d) {
    return std::chrono::duration<double>(d).count();
}

TEST(NotifyQueue, RetriesWithDoublingBackoffUntilDelivered) {
    auto t = std::make_shared<Scripted>(2, std::chrono::milliseconds(0));
    std::vector<std::string> log;
    QueueOptions o;
    o.attempts = 4;
    o.backoff_us = 100 * k_us_per_ms;
    o.log = [&log](const std::string& line) { log.push_back(line); };
    DeliveryQueue q(o, {t});
    ASSERT_TRUE(q.push(t, notice("user alice")));
    const std::vector<Outcome> out = q.wait_idle();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(out[0].delivered);
    EXPECT_EQ(out[0].attempts, 3);
    const std::vector<Clock::time_point> s = t->starts();
    ASSERT_EQ(s.size(), 3u);
    EXPECT_GE(seconds(s[1] - s[0]), 0.1);
    EXPECT_GE(seconds(s[2] - s[1]), 0.2);
    ASSERT_EQ(log.size(), 2u);
    EXPECT_EQ(log[0], "delivery: webhook.test for user alice: attempt 1 of 4 failed: HTTP 503; "
                      "retrying in 100ms");
    EXPECT_EQ(log[1], "delivery: webhook.test for user alice: attempt 2 of 4 failed: HTTP 503; "
                      "retrying in 200ms");
    const std::vector<TransportCounts> c = q.counts();
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0].delivered, 1u);
    EXPECT_EQ(c[0].retries, 2u);
    EXPECT_EQ(c[0].failed, 0u);
}

TEST(NotifyQueue, GivesUpAfterTheLastAttemptAndCapsTheBackoff) {
    auto t = std::make_shared<Scripted>(100, std::chrono::milliseconds(0));
    QueueOptions o;
    o.attempts = 3;
    o.backoff_us = 100 * k_us_per_ms;
    o.max_backoff_us = 150 * k_us_per_ms;
    DeliveryQueue q(o, {t});
    q.push(t, notice("admin admin"));
    const std::vector<Outcome> out = q.wait_idle();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_FALSE(out[0].delivered);
    EXPECT_EQ(out[0].error, "HTTP 503");
    const std::vector<Clock::time_point> s = t->starts();
    ASSERT_EQ(s.size(), 3u);
    EXPECT_GE(seconds(s[2] - s[1]), 0.15);
    EXPECT_LT(seconds(s[2] - s[1]), 0.2 + 0.5) << "capped at 150 ms, not doubled to 200 ms";
    EXPECT_EQ(q.counts()[0].failed, 1u);
    EXPECT_EQ(q.counts()[0].retries, 2u);
}

TEST(NotifyQueue, AFullQueueDropsAndCountsAndPushNeverWaits) {
    auto t = std::make_shared<Scripted>(0, std::chrono::milliseconds(300));
    QueueOptions o;
    o.capacity = 2;
    DeliveryQueue q(o, {t});
    const auto before = Clock::now();
    int accepted = 0;
    for (int i = 0; i < 5; ++i) {
        accepted += q.push(t, notice("user " + std::to_string(i))) ? 1 : 0;
    }
    EXPECT_LT(seconds(Clock::now() - before), 0.1) << "push waited on a send";
    EXPECT_EQ(accepted, 2);
    q.wait_idle();
    EXPECT_EQ(q.counts()[0].delivered, 2u);
    EXPECT_EQ(q.counts()[0].dropped, 3u);
}

TEST(NotifyQueue, StoppingCancelsTheAttemptInFlight) {
    auto t = std::make_shared<Scripted>(0, std::chrono::milliseconds(60'000));
    std::vector<std::string> log;
    QueueOptions o;
    o.log = [&log](const std::string& line) { log.push_back(line); };
    const auto before = Clock::now();
    {
        DeliveryQueue q(o, {t});
        q.push(t, notice("user a"));
        q.push(t, notice("user b"));
        while (t->starts().empty()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    EXPECT_LT(seconds(Clock::now() - before), 5.0);
    ASSERT_FALSE(log.empty());
    EXPECT_EQ(log.back(), "delivery: stopping with 1 message not delivered");
}

} // namespace queue_test
} // namespace gua::notify
