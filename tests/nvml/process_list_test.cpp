// SPDX-License-Identifier: Apache-2.0
// Running-process lists: stride decoding and its sanity checks, the INSUFFICIENT_SIZE protocol
// and duplicate merging, on hand-made driver replies.
#include "nvml/process_list.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace gua::nvml {
namespace {

constexpr std::uint64_t k_gib = 1024ULL * 1024 * 1024;

/// Writes entries the way a driver with `stride`-byte entries would (32-byte buffer per entry).
std::vector<std::byte> driver_buffer(const std::vector<nvmlProcessDetail_v1_t>& entries,
                                     std::size_t stride) {
    std::vector<std::byte> buffer(entries.size() * 32);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        std::memcpy(buffer.data() + i * stride, &entries[i], stride);
    }
    return buffer;
}

DecodedProcesses decode_checked(const std::vector<std::byte>& buffer, std::size_t count,
                                std::size_t stride, std::optional<std::uint64_t> total) {
    DecodedProcesses out;
    decode_checked(buffer.data(), count, stride, total, out);
    return out;
}

const std::vector<nvmlProcessDetail_v1_t> k_three = {
    {4242, 8 * k_gib, NVML_INSTANCE_ID_NONE, NVML_INSTANCE_ID_NONE, 0},
    {4243, 2 * k_gib, NVML_INSTANCE_ID_NONE, NVML_INSTANCE_ID_NONE, 0},
    {90001, 512ULL << 20, NVML_INSTANCE_ID_NONE, NVML_INSTANCE_ID_NONE, 0}};

TEST(NvmlProcessList, DecodesEachStride) {
    for (const std::size_t stride : {16u, 24u, 32u}) {
        const auto buffer = driver_buffer(k_three, stride);
        const auto decoded = decode_checked(buffer, 3, stride, 80 * k_gib);
        ASSERT_EQ(decoded.processes.size(), 3u) << stride;
        EXPECT_EQ(decoded.stride, stride);
        EXPECT_EQ(decoded.processes[1].pid, 4243u);
        EXPECT_EQ(decoded.processes[2].used_bytes, 512ULL << 20);
    }
}

TEST(NvmlProcessList, CorrectsAWrongStrideInsteadOfReadingGarbage) {
    const auto wide = driver_buffer(k_three, 32);
    std::vector<RawProcess> as_24;
    decode_process_infos(wide.data(), 3, 24, as_24);
    EXPECT_FALSE(plausible(as_24[1], 80 * k_gib)); // what a naive reader would report
    const auto decoded = decode_checked(wide, 3, 24, 80 * k_gib);
    EXPECT_EQ(decoded.stride, 32u);
    ASSERT_EQ(decoded.processes.size(), 3u);
    EXPECT_EQ(decoded.processes[2].pid, 90001u);

    const auto narrow = driver_buffer(k_three, 24);
    const auto back = decode_checked(narrow, 3, 32, 80 * k_gib);
    EXPECT_EQ(back.stride, 24u);
    EXPECT_EQ(back.processes[1].used_bytes, 2 * k_gib);
}

TEST(NvmlProcessList, DropsImplausibleEntries) {
    auto entries = k_three;
    entries[0].usedGpuMemory = 100 * k_gib; // more than the card holds
    entries[1].usedGpuMemory = NVML_VALUE_NOT_AVAILABLE_ULL;
    const auto buffer = driver_buffer(entries, 24);
    const auto decoded = decode_checked(buffer, 3, 24, 80 * k_gib);
    EXPECT_EQ(decoded.dropped, 1);
    ASSERT_EQ(decoded.processes.size(), 2u);
    EXPECT_EQ(decoded.processes[0].pid, 4243u);
    EXPECT_FALSE(decoded.processes[0].used_bytes.has_value());
}

TEST(NvmlProcessList, RetriesWhileProcessesAppearAndGivesUpAtTheCap) {
    int calls = 0;
    unsigned int live = 2;
    const ProcessListCall growing = [&](unsigned int* count, void* infos) {
        ++calls;
        live += infos != nullptr && calls <= 3 ? 20 : 0; // processes appear before data calls
        if (infos == nullptr || *count < live) {
            *count = live;
            return NVML_ERROR_INSUFFICIENT_SIZE;
        }
        std::vector<nvmlProcessInfo_v2_t> entries(live);
        for (unsigned int i = 0; i < live; ++i) {
            entries[i] = {100 + i, k_gib, NVML_INSTANCE_ID_NONE, NVML_INSTANCE_ID_NONE};
        }
        std::memcpy(infos, entries.data(), live * sizeof(nvmlProcessInfo_v2_t));
        *count = live;
        return NVML_SUCCESS;
    };
    ProcessListBuffer read;
    unsigned int capacity = 0;
    EXPECT_EQ(read_process_list(growing, 24, std::nullopt, capacity, read), NVML_SUCCESS);
    EXPECT_EQ(read.list.processes.size(), live);
    EXPECT_EQ(calls, 3); // size query, a buffer made short by new processes, success
    EXPECT_EQ(capacity, 2 * 22 + 5);
    // The next read offers that capacity at once: one call while the list fits.
    EXPECT_EQ(read_process_list(growing, 24, std::nullopt, capacity, read), NVML_SUCCESS);
    EXPECT_EQ(calls, 4);
    EXPECT_EQ(read.list.processes.size(), live);

    const ProcessListCall always_more = [](unsigned int* count, void*) {
        *count += 100;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    };
    capacity = 0;
    EXPECT_EQ(read_process_list(always_more, 24, std::nullopt, capacity, read),
              NVML_ERROR_INSUFFICIENT_SIZE);
    EXPECT_TRUE(read.list.processes.empty());
    EXPECT_EQ(capacity, 0u);

    const ProcessListCall none = [](unsigned int* count, void*) {
        *count = 0;
        return NVML_SUCCESS;
    };
    EXPECT_EQ(read_process_list(none, 24, std::nullopt, capacity, read), NVML_SUCCESS);
    EXPECT_TRUE(read.list.processes.empty());
}

TEST(NvmlProcessList, MergesDuplicatePids) {
    std::vector<RawProcess> merged = {{7, 100, 1, 0}, {8, 5, 1, 0}, {7, 50, 2, 0}, {7, 120, 1, 0}};
    merge_duplicate_pids(merged);
    ASSERT_EQ(merged.size(), 2u);
    EXPECT_EQ(merged[0].pid, 7u);
    EXPECT_EQ(merged[0].used_bytes, 170u); // instance 1 (max of 100/120) + instance 2
    EXPECT_EQ(merged[1].used_bytes, 5u);
}

// Short lists are compared pairwise, long ones (over 64 entries) through a sorted copy.
TEST(NvmlProcessList, FindsDuplicatePidsInShortAndLongLists) {
    for (const std::size_t n : {2U, 16U, 64U, 65U, 500U}) {
        std::vector<RawProcess> list;
        for (std::size_t i = 0; i < n; ++i) {
            list.push_back({static_cast<std::uint32_t>(1000 + 7 * i), 100, 1, 0});
        }
        EXPECT_FALSE(has_duplicate_pids(list)) << n;
        list[n - 1].pid = list[n / 2 - 1].pid;
        EXPECT_TRUE(has_duplicate_pids(list)) << n;
    }
    EXPECT_FALSE(has_duplicate_pids({}));
}

} // namespace
} // namespace gua::nvml
