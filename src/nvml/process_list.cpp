// SPDX-License-Identifier: Apache-2.0
// Reading and decoding NVML running-process lists, defensively (nvml-notes §5, §12).
#include "nvml/process_list.hpp"

#include <algorithm>
#include <cstring>

namespace gua::nvml {
namespace {

constexpr std::size_t k_max_stride = sizeof(nvmlProcessDetail_v1_t);
constexpr int k_max_data_calls = 5;
constexpr unsigned int k_max_entries = 4096;
constexpr std::uint32_t k_max_pid = 1u << 22;
constexpr std::uint32_t k_max_instance_id = 64;

template <typename Info> Info load(const std::byte* data, std::size_t offset) {
    Info info{};
    std::memcpy(&info, data + offset, sizeof(Info));
    return info;
}

std::optional<std::uint64_t> memory_of(unsigned long long used) {
    if (used == NVML_VALUE_NOT_AVAILABLE_ULL) {
        return std::nullopt;
    }
    return used;
}

bool instance_ok(std::uint32_t id) {
    return id == NVML_INSTANCE_ID_NONE || id < k_max_instance_id;
}

} // namespace

void decode_process_infos(const std::byte* data, std::size_t count, std::size_t stride,
                          std::vector<RawProcess>& out) {
    out.clear();
    for (std::size_t i = 0; i < count; ++i) {
        RawProcess p;
        if (stride == sizeof(nvmlProcessInfo_v1_t)) {
            const auto info = load<nvmlProcessInfo_v1_t>(data, i * stride);
            p.pid = info.pid;
            p.used_bytes = memory_of(info.usedGpuMemory);
        } else {
            const auto info = load<nvmlProcessInfo_v2_t>(data, i * stride);
            p.pid = info.pid;
            p.used_bytes = memory_of(info.usedGpuMemory);
            p.gpu_instance_id = info.gpuInstanceId;
            p.compute_instance_id = info.computeInstanceId;
        }
        out.push_back(p);
    }
}

bool plausible(const RawProcess& process, std::optional<std::uint64_t> memory_total_bytes) {
    if (process.pid == 0 || process.pid > k_max_pid) {
        return false;
    }
    if (memory_total_bytes && process.used_bytes && *process.used_bytes > *memory_total_bytes) {
        return false;
    }
    return instance_ok(process.gpu_instance_id) && instance_ok(process.compute_instance_id);
}

void decode_checked(const std::byte* data, std::size_t count, std::size_t stride,
                    std::optional<std::uint64_t> memory_total_bytes, DecodedProcesses& out) {
    const auto all_plausible = [&](const std::vector<RawProcess>& list) {
        return std::all_of(list.begin(), list.end(),
                           [&](const RawProcess& p) { return plausible(p, memory_total_bytes); });
    };
    decode_process_infos(data, count, stride, out.processes);
    out.stride = stride;
    out.dropped = 0;
    const bool wide_stride = stride == sizeof(nvmlProcessInfo_v2_t) || stride == k_max_stride;
    if (wide_stride && count > 1 && plausible(out.processes.front(), memory_total_bytes) &&
        !all_plausible(out.processes)) {
        const std::size_t other =
            stride == k_max_stride ? sizeof(nvmlProcessInfo_v2_t) : k_max_stride;
        std::vector<RawProcess> retry;
        decode_process_infos(data, count, other, retry);
        if (all_plausible(retry)) {
            out.processes = std::move(retry);
            out.stride = other;
            return;
        }
    }
    const auto bad =
        std::remove_if(out.processes.begin(), out.processes.end(),
                       [&](const RawProcess& p) { return !plausible(p, memory_total_bytes); });
    out.dropped = static_cast<int>(out.processes.end() - bad);
    out.processes.erase(bad, out.processes.end());
}

nvmlReturn_t read_process_list(const ProcessListCall& call, std::size_t stride,
                               std::optional<std::uint64_t> memory_total_bytes,
                               unsigned int& capacity, ProcessListBuffer& buffer) {
    buffer.list.processes.clear();
    buffer.list.stride = 0;
    buffer.list.dropped = 0;
    unsigned int count = 0;
    nvmlReturn_t rc = NVML_ERROR_INSUFFICIENT_SIZE;
    if (capacity == 0) {
        rc = call(&count, nullptr);
        if (rc == NVML_SUCCESS) {
            return rc;
        }
    }
    for (int attempt = 0; rc == NVML_ERROR_INSUFFICIENT_SIZE && attempt < k_max_data_calls;
         ++attempt) {
        const unsigned int offered =
            attempt == 0 && capacity != 0
                ? capacity
                : std::min(2 * std::min(count, k_max_entries) + 5, k_max_entries);
        // Zeroed, so that entries a narrower stride left unwritten never look plausible.
        buffer.bytes.assign(static_cast<std::size_t>(offered) * k_max_stride, std::byte{0});
        count = offered;
        rc = call(&count, buffer.bytes.data());
        if (rc == NVML_SUCCESS) {
            capacity = offered;
            decode_checked(buffer.bytes.data(), std::min(count, offered), stride,
                           memory_total_bytes, buffer.list);
            return rc;
        }
    }
    capacity = 0;
    return rc;
}

bool has_duplicate_pids(const std::vector<RawProcess>& processes) {
    const auto ascending = std::adjacent_find(processes.begin(), processes.end(),
                                              [](const RawProcess& a, const RawProcess& b) {
                                                  return a.pid >= b.pid;
                                              }) == processes.end();
    if (ascending) {
        return false; // drivers usually list processes by pid
    }
    constexpr std::size_t k_pairwise = 64; // below, comparing pairs beats sorting a copy
    if (processes.size() <= k_pairwise) {
        for (std::size_t i = 1; i < processes.size(); ++i) {
            for (std::size_t j = 0; j < i; ++j) {
                if (processes[i].pid == processes[j].pid) {
                    return true;
                }
            }
        }
        return false;
    }
    std::vector<std::uint32_t> pids;
    pids.reserve(processes.size());
    for (const RawProcess& p : processes) {
        pids.push_back(p.pid);
    }
    std::sort(pids.begin(), pids.end());
    return std::adjacent_find(pids.begin(), pids.end()) != pids.end();
}

void merge_duplicate_pids(std::vector<RawProcess>& processes) {
    if (!has_duplicate_pids(processes)) {
        return; // the usual case: nothing to merge, nothing allocated
    }
    struct Share {
        std::uint32_t gpu_instance_id;
        std::uint32_t compute_instance_id;
        std::optional<std::uint64_t> used_bytes;
    };
    std::vector<RawProcess> out;
    std::vector<std::vector<Share>> shares; // per entry of `out`: memory per MIG instance
    for (const RawProcess& p : processes) {
        const auto it = std::find_if(out.begin(), out.end(),
                                     [&](const RawProcess& q) { return q.pid == p.pid; });
        if (it == out.end()) {
            out.push_back(p);
            shares.push_back({{p.gpu_instance_id, p.compute_instance_id, p.used_bytes}});
            continue;
        }
        auto& list = shares[static_cast<std::size_t>(it - out.begin())];
        const auto same = std::find_if(list.begin(), list.end(), [&](const Share& s) {
            return s.gpu_instance_id == p.gpu_instance_id &&
                   s.compute_instance_id == p.compute_instance_id;
        });
        if (same == list.end()) {
            list.push_back({p.gpu_instance_id, p.compute_instance_id, p.used_bytes});
        } else if (p.used_bytes) {
            same->used_bytes = std::max(same->used_bytes.value_or(0), *p.used_bytes);
        }
        std::optional<std::uint64_t> total;
        for (const Share& s : list) {
            if (s.used_bytes) {
                total = total.value_or(0) + *s.used_bytes;
            }
        }
        it->used_bytes = total;
    }
    processes = std::move(out);
}

} // namespace gua::nvml
