// SPDX-License-Identifier: Apache-2.0
// Ring integration against the scenario's ground truth on the fake driver: dry rings whose bursts
// coincide with polls, rings shorter than the poll span (from a full or an empty start), failed
// ring and process-list reads, and drivers that offer only snapshots.
#include "nvml/fake_driver.hpp"
#include "nvml/nvml_source.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace gua::nvml {
namespace {

using nlohmann::json;
using telemetry::DevicePoll;
using telemetry::UtilSource;
using testing::FakeDriver;
using testing::poll_mean;
using testing::Variant;
using testing::wall_at;

/// A piecewise-constant utilization series (the scenario's "util"), integrated here for truth.
struct Steps {
    std::vector<std::pair<double, double>> points;

    json to_json() const {
        json out = json::array();
        for (const auto& [t, v] : points) {
            out.push_back({t, v});
        }
        return out;
    }
    double at(double t) const {
        double value = points.front().second;
        for (const auto& [from, v] : points) {
            if (from <= t) {
                value = v;
            }
        }
        return value;
    }
    /// Mean over [a, b], integrating step by step.
    double mean(double a, double b) const {
        std::vector<double> cuts = {a, b};
        for (const auto& point : points) {
            if (point.first > a && point.first < b) {
                cuts.push_back(point.first);
            }
        }
        std::sort(cuts.begin(), cuts.end());
        double sum = 0;
        for (std::size_t i = 1; i < cuts.size(); ++i) {
            sum += at(cuts[i - 1]) * (cuts[i] - cuts[i - 1]);
        }
        return sum / (b - a);
    }
};

/// 100 % for `on_s` around every multiple of `every_s` (centred on it), 0 % otherwise.
Steps bursts_around(double every_s, double on_s, double until_s) {
    Steps s;
    s.points.push_back({0, 100});
    s.points.push_back({on_s / 2, 0});
    for (double t = every_s; t < until_s; t += every_s) {
        s.points.push_back({t - on_s / 2, 100});
        s.points.push_back({t + on_s / 2, 0});
    }
    return s;
}

/// Polls at `times` (the first primes); returns the polls after the first.
std::vector<DevicePoll> poll_at(NvmlSource& source, const FakeDriver& fake,
                                const std::vector<double>& times) {
    std::vector<DevicePoll> out;
    for (std::size_t i = 0; i < times.size(); ++i) {
        fake.set_time(times[i]);
        DevicePoll poll = source.poll(wall_at(times[i])).at(0);
        if (i > 0) {
            out.push_back(std::move(poll));
        }
    }
    return out;
}

std::vector<double> every(double from, double step, double to) {
    std::vector<double> out;
    for (double t = from; t <= to + 1e-9; t += step) {
        out.push_back(t);
    }
    return out;
}

TEST(NvmlRingTruth, DryRingWithBurstsAtThePollsReadsTheTrueShare) {
    // A driver that writes no samples while idle, 1 s bursts centred on every poll: a snapshot
    // at each poll sees 100 %, the card is busy 20 % of the time.
    const Steps util = bursts_around(5, 1, 200);
    const json device = {{"uuid", "GPU-0"}, {"util_idle_mode", "dry"}, {"util", util.to_json()}};
    for (const double span : {5.0, 30.0}) {
        FakeDriver fake(json{{"devices", {device}}});
        auto source = fake.source();
        ASSERT_TRUE(source);
        std::vector<double> times = {0.5}; // the ring holds the first burst's head
        for (double t = span; t <= 60; t += span) {
            times.push_back(t);
        }
        const std::vector<DevicePoll> polls = poll_at(*source, fake, times);
        double sum = 0;
        for (std::size_t i = 0; i < polls.size(); ++i) {
            EXPECT_EQ(polls[i].util_source, UtilSource::samples) << span << " " << i;
            EXPECT_EQ(polls[i].unmeasured_us, 0) << span << " " << i;
            sum += poll_mean(polls[i]) * (times[i + 1] - times[i]);
        }
        const double truth = util.mean(times.front(), times.back());
        EXPECT_NEAR(sum / (times.back() - times.front()), truth, 1.0) << span;
        EXPECT_LT(truth, 21.0);
    }
}

TEST(NvmlRingTruth, ShortRingPolledEveryFiveSecondsFlagsTheLostTime) {
    // 6 entries at 0.1 s cover 0.6 s; busy 4 s of every 5 s, idle the last second before each
    // poll: what the ring still shows (idle) is not the span's truth (80 %), so the rest must
    // be flagged, not stretched.
    constexpr double k_period = 0.1;
    constexpr int k_ring = 6;
    Steps util{{{0, 100}, {1, 0}}};
    for (double t = 2; t < 100; t += 5) {
        util.points.push_back({t, 100});
        util.points.push_back({t + 4, 0});
    }
    const json device = {{"uuid", "GPU-0"},
                         {"ring_size", k_ring},
                         {"util_period_s", k_period},
                         {"util", util.to_json()}};
    FakeDriver fake(json{{"devices", {device}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    const std::vector<double> times = {2, 7, 12, 17};
    const std::vector<DevicePoll> polls = poll_at(*source, fake, times);
    const double ring_covers = k_ring * k_period;
    for (std::size_t i = 0; i < polls.size(); ++i) {
        const DevicePoll& poll = polls[i];
        EXPECT_EQ(poll.util_source, UtilSource::partial) << i;
        const double lost_s = (times[i + 1] - times[i]) - ring_covers;
        EXPECT_NEAR(static_cast<double>(poll.unmeasured_us) / 1e6, lost_s, k_period) << i;
        // The measured part is what the ring still held: its last 0.6 s.
        EXPECT_NEAR(poll_mean(poll), util.mean(times[i + 1] - ring_covers, times[i + 1]), 1.0) << i;
    }
    EXPECT_EQ(source->diagnostics().lost_sample_batches, 3);
    // The source asks to be polled within half what the ring covers.
    EXPECT_EQ(source->max_poll_span_us(), static_cast<DurationUs>(ring_covers / 2 * 1e6));
}

TEST(NvmlRingTruth, RingEmptyAtStartThenOverflowingIsStillDetected) {
    constexpr double k_period = 0.1;
    const json device = {
        {"uuid", "GPU-0"}, {"ring_size", 6}, {"util_period_s", k_period}, {"util", {{0, 50}}}};
    FakeDriver fake(json{{"devices", {device}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    const std::vector<double> times = {0, 5, 10}; // at 0 the ring has no entry yet
    const std::vector<DevicePoll> polls = poll_at(*source, fake, times);
    for (const DevicePoll& poll : polls) {
        EXPECT_EQ(poll.util_source, UtilSource::partial);
        EXPECT_NEAR(static_cast<double>(poll.unmeasured_us) / 1e6, 5 - 6 * k_period, k_period);
        EXPECT_NEAR(poll_mean(poll), 50.0, 1e-9);
    }
    EXPECT_EQ(source->diagnostics().lost_sample_batches, 2);
}

TEST(NvmlRingTruth, AFailedRingReadIsUnmeasuredAndItsSamplesAreNotCreditedLater) {
    const Steps util{{{0, 100}, {12, 0}}};
    const json scenario = {
        {"devices", {{{"uuid", "GPU-0"}, {"util", util.to_json()}}}},
        {"faults",
         {{{"function", "nvmlDeviceGetSamples"}, {"from", 8}, {"to", 11}, {"error", 999}}}}};
    FakeDriver fake(scenario);
    auto source = fake.source();
    ASSERT_TRUE(source);
    const std::vector<double> times = {0.5, 5, 10, 15};
    const std::vector<DevicePoll> polls = poll_at(*source, fake, times);
    EXPECT_EQ(polls[0].util_source, UtilSource::samples);
    EXPECT_NEAR(poll_mean(polls[0]), 100.0, 1e-9);
    EXPECT_EQ(polls[1].util_source, UtilSource::partial); // not the snapshot's 100 %
    EXPECT_TRUE(polls[1].util.empty());
    EXPECT_EQ(polls[1].unmeasured_us, 5 * k_us_per_second);
    EXPECT_GT(polls[1].read_errors, 0);
    // The next reply also holds (5, 10]; only (10, 15] is this poll's.
    EXPECT_EQ(polls[2].util_source, UtilSource::samples);
    EXPECT_NEAR(poll_mean(polls[2]), util.mean(10, 15), 1.0);
}

TEST(NvmlRingTruth, AFailedComputeProcessListLeavesTheHoldersUnknown) {
    const json scenario = {
        {"devices", {{{"uuid", "GPU-0"}, {"util", {{0, 0}}}}}},
        {"processes", {{{"device", 0}, {"pid", 4242}, {"memory_mib", {{0, 8000}}}}}},
        {"faults",
         {{{"function", "nvmlDeviceGetComputeRunningProcesses"},
           {"from", 10},
           {"to", 20},
           {"error", 999}}}}};
    FakeDriver fake(scenario);
    auto source = fake.source();
    ASSERT_TRUE(source);
    const std::vector<DevicePoll> polls = poll_at(*source, fake, {0, 5, 15, 25});
    EXPECT_FALSE(polls[0].processes_unknown);
    EXPECT_EQ(polls[0].processes.size(), 1u);
    EXPECT_TRUE(polls[1].processes_unknown);
    EXPECT_TRUE(polls[1].processes.empty());
    EXPECT_EQ(polls[1].readings.mem_used_mib, 8000); // the memory is there, its holder unknown
    EXPECT_FALSE(polls[2].processes_unknown);
    EXPECT_EQ(polls[2].processes.size(), 1u);
}

TEST(NvmlRingTruth, SnapshotOnlyDriversAreLabelledAndNoted) {
    const json device = {{"uuid", "GPU-0"}, {"util", {{0, 30}}}};
    FakeDriver fake(json{{"devices", {device}}});
    {
        auto legacy = fake.source(Variant::legacy); // no nvmlDeviceGetSamples at all
        ASSERT_TRUE(legacy);
        const std::vector<DevicePoll> polls = poll_at(*legacy, fake, {0, 5});
        EXPECT_EQ(polls[0].util_source, UtilSource::snapshot);
        EXPECT_EQ(poll_mean(polls[0]), 30.0);
        const std::string note = legacy->measurement_note();
        EXPECT_NE(note.find("snapshot"), std::string::npos) << note;
        EXPECT_NE(note.find("nvmlDeviceGetSamples"), std::string::npos) << note;
        EXPECT_EQ(legacy->max_poll_span_us(), telemetry::k_default_max_poll_span_us);
    }
    {
        auto modern = fake.source();
        ASSERT_TRUE(modern);
        EXPECT_EQ(modern->measurement_note(), "");
    }
    json limited = device;
    limited["not_supported"] = {"nvmlDeviceGetSamples"};
    fake.write_scenario(json{{"devices", {limited, device}}});
    {
        auto modern = fake.source();
        ASSERT_TRUE(modern);
        const std::string note = modern->measurement_note();
        EXPECT_NE(note.find("GPU 0 comes"), std::string::npos) << note;
        const std::vector<DevicePoll> polls = poll_at(*modern, fake, {0, 5});
        EXPECT_EQ(polls[0].util_source, UtilSource::snapshot);
    }
}

TEST(NvmlRingTruth, LostSamplesAndJunkAreLoggedOnceThenRateLimited) {
    const json device = {{"uuid", "GPU-0"},
                         {"ring_size", 6},
                         {"util_period_s", 0.1},
                         {"util", {{0, 50}, {21.5, 250}, {21.6, 50}}}}; // junk seen at 22
    FakeDriver fake(json{{"devices", {device}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    std::vector<std::string> lines;
    source->set_notice_sink([&lines](const std::string& line) { lines.push_back(line); });
    poll_at(*source, fake, every(2, 5, 62)); // 12 lossy polls within one minute, one junk sample
    const auto count = [&lines](const std::string& word) {
        return std::count_if(lines.begin(), lines.end(), [&word](const std::string& line) {
            return line.find(word) != std::string::npos;
        });
    };
    EXPECT_EQ(count("overflowed"), 1) << ::testing::PrintToString(lines);
    EXPECT_EQ(count("over 100 %"), 1) << ::testing::PrintToString(lines);
    // Ten minutes later the next loss is reported again, with the count since the last line.
    poll_at(*source, fake, {62, 62 + 600});
    EXPECT_EQ(count("overflowed"), 2) << ::testing::PrintToString(lines);
    EXPECT_NE(lines.back().find("overflowed between polls 12 time(s)"), std::string::npos)
        << lines.back();
}

TEST(NvmlRingTruth, PollsFasterThanTheRingWritesAreSaidOnce) {
    const json ring = {{"util_period_s", 0.2}, {"util", {{0, 100}}}};
    FakeDriver fake(json{{"devices", {ring, ring}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    std::vector<std::string> lines;
    source->set_notice_sink([&lines](const std::string& line) { lines.push_back(line); });
    poll_at(*source, fake, every(1, 0.5, 5)); // 2.5 periods apart: nothing to say
    EXPECT_TRUE(lines.empty()) << ::testing::PrintToString(lines);
    poll_at(*source, fake, every(5.1, 0.1, 7)); // 0.1 s apart on a 0.2 s ring: half unmeasured
    ASSERT_EQ(lines.size(), 1U) << ::testing::PrintToString(lines);
    EXPECT_EQ(lines[0],
              "polls every 100 ms come faster than GPU 0's utilization ring writes (one sample "
              "every 200 ms): a poll that finds no new sample leaves its span unmeasured while the "
              "card is busy, up to 50 % of the time; an interval of at least 300 ms avoids it (see "
              "docs/measurement.md, \"Adaptive polling\")");
}

} // namespace
} // namespace gua::nvml
