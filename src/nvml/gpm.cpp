// SPDX-License-Identifier: Apache-2.0
// GpmRing: support check, sample allocation, the ring of two samples and nvmlGpmMetricsGet with
// its per-metric return codes.
#include "nvml/gpm.hpp"

#include <cmath>

namespace gua::nvml {
namespace {

struct Wanted {
    nvmlGpmMetricId_t id;
    std::optional<std::int64_t> telemetry::CardReadings::*reading;
};

constexpr std::array<Wanted, 7> k_wanted{{
    {NVML_GPM_METRIC_SM_UTIL, &telemetry::CardReadings::sm_active_cpct},
    {NVML_GPM_METRIC_SM_OCCUPANCY, &telemetry::CardReadings::sm_occupancy_cpct},
    {NVML_GPM_METRIC_ANY_TENSOR_UTIL, &telemetry::CardReadings::tensor_active_cpct},
    {NVML_GPM_METRIC_DRAM_BW_UTIL, &telemetry::CardReadings::dram_bw_cpct},
    {NVML_GPM_METRIC_FP64_UTIL, &telemetry::CardReadings::fp64_active_cpct},
    {NVML_GPM_METRIC_FP32_UTIL, &telemetry::CardReadings::fp32_active_cpct},
    {NVML_GPM_METRIC_FP16_UTIL, &telemetry::CardReadings::fp16_active_cpct},
}};

/// A percentage as hundredths, or nullopt for a value no percentage can have (NaN, negative,
/// far above 100). Values a little over 100 (rounding in the driver) are clamped.
std::optional<std::int64_t> hundredths(double pct) {
    if (!std::isfinite(pct) || pct < 0 || pct > 101) {
        return std::nullopt;
    }
    return std::min<std::int64_t>(std::llround(pct * 100), 10000);
}

} // namespace

GpmRing::~GpmRing() {
    for (nvmlGpmSample_t sample : m_samples) {
        if (sample != nullptr) {
            m_library->call<Entry::gpm_sample_free>(sample);
        }
    }
}

bool GpmRing::ready(GpmTarget target) {
    if (m_support == Support::unknown) {
        nvmlGpmSupport_t support{NVML_GPM_SUPPORT_VERSION, 0};
        const bool has_calls = m_library->has(Entry::gpm_sample_alloc) &&
                               m_library->has(Entry::gpm_sample_free) &&
                               m_library->has(Entry::gpm_metrics_get) &&
                               m_library->has(target.gpu_instance_id ? Entry::gpm_mig_sample_get
                                                                     : Entry::gpm_sample_get);
        const bool yes = has_calls &&
                         m_library->call<Entry::gpm_query_device_support>(
                             target.device, &support) == NVML_SUCCESS &&
                         support.isSupportedDevice != 0;
        m_support = yes ? Support::yes : Support::no;
    }
    if (m_support == Support::no) {
        return false;
    }
    for (nvmlGpmSample_t& sample : m_samples) {
        if (sample == nullptr &&
            m_library->call<Entry::gpm_sample_alloc>(&sample) != NVML_SUCCESS) {
            sample = nullptr;
            return false;
        }
    }
    if (!m_request) {
        m_request = std::make_unique<nvmlGpmMetricsGet_t>();
    }
    return true;
}

void GpmRing::read(GpmTarget target, TimeUs now, telemetry::CardReadings& readings, int& errors,
                   bool& lost) {
    if (!ready(target)) {
        return;
    }
    if (m_newest >= 0 && now - m_newest_at < k_gpm_min_interval_us && now >= m_newest_at) {
        return; // too soon for the driver: the next poll's metrics cover this span too
    }
    const int slot = m_newest == 0 ? 1 : 0;
    nvmlGpmSample_t sample = m_samples[static_cast<std::size_t>(slot)];
    const nvmlReturn_t rc = target.gpu_instance_id
                                ? m_library->call<Entry::gpm_mig_sample_get>(
                                      target.device, *target.gpu_instance_id, sample)
                                : m_library->call<Entry::gpm_sample_get>(target.device, sample);
    if (rc != NVML_SUCCESS) {
        lost = lost || rc == NVML_ERROR_GPU_IS_LOST;
        if (rc == NVML_ERROR_NO_PERMISSION) {
            m_support = Support::no; // profiling restricted to administrators: stop asking
        }
        errors += unsupported(rc) || rc == NVML_ERROR_GPU_IS_LOST || rc == NVML_ERROR_NO_PERMISSION
                      ? 0
                      : 1;
        m_newest = -1;
        return;
    }
    const int previous = m_newest;
    const TimeUs previous_at = m_newest_at;
    m_newest = slot;
    m_newest_at = now;
    if (previous < 0 || now <= previous_at) {
        return; // the first sample of a pair (or a wall clock that stepped back)
    }
    nvmlGpmMetricsGet_t& request = *m_request;
    request.version = NVML_GPM_METRICS_GET_VERSION;
    request.numMetrics = static_cast<unsigned int>(k_wanted.size());
    request.sample1 = m_samples[static_cast<std::size_t>(previous)];
    request.sample2 = sample;
    for (std::size_t i = 0; i < k_wanted.size(); ++i) {
        request.metrics[i] = nvmlGpmMetric_t{};
        request.metrics[i].metricId = k_wanted[i].id;
    }
    const nvmlReturn_t metrics_rc = m_library->call<Entry::gpm_metrics_get>(&request);
    if (metrics_rc != NVML_SUCCESS) {
        lost = lost || metrics_rc == NVML_ERROR_GPU_IS_LOST;
        errors += unsupported(metrics_rc) || metrics_rc == NVML_ERROR_GPU_IS_LOST ? 0 : 1;
        return;
    }
    for (std::size_t i = 0; i < k_wanted.size(); ++i) {
        const nvmlGpmMetric_t& m = request.metrics[i];
        // A metric for another id than asked (a confused driver) is left out, as is one whose
        // own return code says it was not measured.
        if (m.metricId == k_wanted[i].id && m.nvmlReturn == NVML_SUCCESS) {
            readings.*k_wanted[i].reading = hundredths(m.value);
        }
    }
}

} // namespace gua::nvml
