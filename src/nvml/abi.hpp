// SPDX-License-Identifier: Apache-2.0
// The hand-declared subset of NVML's C ABI that gua uses (Debian ships no nvml.h). Names follow
// NVIDIA's header so they can be grepped; values and layouts are from nvml-notes §2–§4 (x86-64).
// Only src/nvml/ and the fake driver (tests/fake_nvml/) include this file.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gua::nvml {

/// Return code of every NVML call (an int-sized C enum; values stable from 11.x to 13.3).
enum nvmlReturn_t : int {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_ALREADY_INITIALIZED = 5,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_INSUFFICIENT_POWER = 8,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_IRQ_ISSUE = 11,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_CORRUPTED_INFOROM = 14,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_RESET_REQUIRED = 16,
    NVML_ERROR_OPERATING_SYSTEM = 17,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
    NVML_ERROR_IN_USE = 19,
    NVML_ERROR_MEMORY = 20,
    NVML_ERROR_NO_DATA = 21,
    NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
    NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
    NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_DEPRECATED = 26,
    NVML_ERROR_NOT_READY = 27,
    NVML_ERROR_GPU_NOT_FOUND = 28,
    NVML_ERROR_INVALID_STATE = 29,
    NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30,
    NVML_ERROR_UNKNOWN = 999,
};

/// Opaque device handle (a physical GPU or a MIG instance); owned by the library.
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;

/// Sample rings readable with nvmlDeviceGetSamples.
enum nvmlSamplingType_t : int {
    NVML_TOTAL_POWER_SAMPLES = 0,
    NVML_GPU_UTILIZATION_SAMPLES = 1,
    NVML_MEMORY_UTILIZATION_SAMPLES = 2,
};

/// Which member of nvmlValue_t a sample carries.
enum nvmlValueType_t : int {
    NVML_VALUE_TYPE_DOUBLE = 0,
    NVML_VALUE_TYPE_UNSIGNED_INT = 1,
    NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
    NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
    NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
    NVML_VALUE_TYPE_SIGNED_INT = 5,
    NVML_VALUE_TYPE_UNSIGNED_SHORT = 6,
};

/// Clock domains of nvmlDeviceGetClockInfo.
enum nvmlClockType_t : int {
    NVML_CLOCK_GRAPHICS = 0,
    NVML_CLOCK_SM = 1,
    NVML_CLOCK_MEM = 2,
    NVML_CLOCK_VIDEO = 3,
};

/// Temperature sensors; only the GPU die sensor exists.
enum nvmlTemperatureSensors_t : int { NVML_TEMPERATURE_GPU = 0 };

/// MIG mode values of nvmlDeviceGetMigMode.
inline constexpr unsigned int NVML_DEVICE_MIG_DISABLE = 0;
inline constexpr unsigned int NVML_DEVICE_MIG_ENABLE = 1;

/// String buffer sizes the header documents (UUID/name V2 sizes, driver version).
inline constexpr unsigned int NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;

/// GPU instance / compute instance id of a process that is not on a MIG instance.
inline constexpr unsigned int NVML_INSTANCE_ID_NONE = 0xFFFFFFFFu;
/// usedGpuMemory value meaning "not available".
inline constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE_ULL = ~0ULL;

/// Percent of the last sample period the GPU (and memory controller) was busy.
struct nvmlUtilization_t {
    unsigned int gpu;
    unsigned int memory;
};

/// nvmlDeviceGetMemoryInfo (v1): bytes; `used` includes driver-reserved memory.
struct nvmlMemory_t {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

/// nvmlDeviceGetMemoryInfo_v2: bytes; total = reserved + used + free. Set version first.
struct nvmlMemory_v2_t {
    unsigned int version;
    unsigned long long total;
    unsigned long long reserved;
    unsigned long long free;
    unsigned long long used;
};
inline constexpr unsigned int nvmlMemory_v2 =
    static_cast<unsigned int>(sizeof(nvmlMemory_v2_t)) | (2u << 24);

/// Entry written by the unversioned (v1) running-process calls: 16 bytes.
struct nvmlProcessInfo_v1_t {
    unsigned int pid;
    unsigned long long usedGpuMemory;
};

/// Entry written by the _v2 and (outside R535.43–.86) _v3 running-process calls: 24 bytes.
struct nvmlProcessInfo_v2_t {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
};
using nvmlProcessInfo_t = nvmlProcessInfo_v2_t;

/// 32-byte entry: nvmlProcessDetail_v1_t, and what _v3 wrote on R535.43–535.86.
struct nvmlProcessDetail_v1_t {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
    unsigned long long usedGpuCcProtectedMemory;
};

/// One per-process utilization entry of nvmlDeviceGetProcessUtilization; timeStamp in µs.
struct nvmlProcessUtilizationSample_t {
    unsigned int pid;
    unsigned long long timeStamp;
    unsigned int smUtil;
    unsigned int memUtil;
    unsigned int encUtil;
    unsigned int decUtil;
};

/// A sample value; read the member named by the call's nvmlValueType_t.
union nvmlValue_t {
    double dVal;
    int siVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    signed long long sllVal;
    unsigned short usVal;
};

/// One entry of a driver sample ring; timeStamp in µs (domain opaque, see notes §14).
struct nvmlSample_t {
    unsigned long long timeStamp;
    nvmlValue_t sampleValue;
};

/// PCI identity; busId is "domain:bus:device.function" (v2/v3), busIdLegacy the short form.
struct nvmlPciInfo_t {
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[32];
};

/// One value of nvmlDeviceGetFieldValues: set fieldId (and scopeId) before the call; value is
/// valid, as the member valueType names, only when nvmlReturn is NVML_SUCCESS.
struct nvmlFieldValue_t {
    unsigned int fieldId;
    unsigned int scopeId;
    long long timestamp; ///< µs since 1970
    long long latencyUsec;
    nvmlValueType_t valueType;
    nvmlReturn_t nvmlReturn;
    nvmlValue_t value;
};

/// Field ids of nvmlDeviceGetFieldValues that gua reads (NVIDIA's NVML_FI_* values).
enum nvmlFieldId_t : unsigned int {
    NVML_FI_DEV_ECC_DBE_VOL_TOTAL = 4, ///< uncorrected (double-bit) ECC errors, volatile
    NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL = 38, ///< NVLink flow-control CRC errors
    NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL = 52,   ///< NVLink replays, all links
    NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL = 59, ///< NVLink recoveries, all links
    NVML_FI_DEV_MEMORY_TEMP = 82,                       ///< memory temperature, °C
    NVML_FI_DEV_PCIE_REPLAY_COUNTER = 94,               ///< PCIe replays since the driver loaded
    NVML_FI_DEV_REMAPPED_COR = 142,                     ///< rows remapped for correctable errors
    NVML_FI_DEV_REMAPPED_UNC = 143,                     ///< rows remapped for uncorrectable errors
    NVML_FI_DEV_REMAPPED_PENDING = 144,                 ///< 1: a remapping waits for a GPU reset
    NVML_FI_DEV_REMAPPED_FAILURE = 145                  ///< 1: a row remapping failed
};

/// nvmlDeviceGetTemperatureV argument (≥ 12.8); set version and sensorType first.
struct nvmlTemperature_v1_t {
    unsigned int version;
    nvmlTemperatureSensors_t sensorType;
    int temperature;
};
inline constexpr unsigned int nvmlTemperature_v1 =
    static_cast<unsigned int>(sizeof(nvmlTemperature_v1_t)) | (1u << 24);

/// Opaque GPM sample (Hopper and newer); allocated and freed by the library.
struct nvmlGpmSample_st;
using nvmlGpmSample_t = nvmlGpmSample_st*;

/// GPM metric ids of nvmlGpmMetricsGet (nvml-notes §9), all percentages 0-100.
enum nvmlGpmMetricId_t : unsigned int {
    NVML_GPM_METRIC_SM_UTIL = 2,         ///< SMs with at least one warp resident: SM active
    NVML_GPM_METRIC_SM_OCCUPANCY = 3,    ///< resident warps over the SMs' maximum
    NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5, ///< any tensor pipe active
    NVML_GPM_METRIC_DRAM_BW_UTIL = 10,   ///< DRAM bandwidth used over its peak
    NVML_GPM_METRIC_FP64_UTIL = 11,      ///< FP64 pipe active
    NVML_GPM_METRIC_FP32_UTIL = 12,      ///< FP32 pipe active
    NVML_GPM_METRIC_FP16_UTIL = 13,      ///< FP16 pipe active
};

/// Entries of nvmlGpmMetricsGet_t::metrics in the newest header (13.2+). Older headers had 98
/// (≤ 12.8) and 210 (12.9-13.1) under the same struct version 1: gua allocates the largest and
/// fills only numMetrics, so a driver built with any of them stays inside the struct.
inline constexpr unsigned int NVML_GPM_METRIC_MAX = 333;
inline constexpr unsigned int NVML_GPM_METRICS_GET_VERSION = 1;
inline constexpr unsigned int NVML_GPM_SUPPORT_VERSION = 1;

/// One metric of nvmlGpmMetricsGet: set metricId before the call; value is valid only when
/// nvmlReturn is NVML_SUCCESS; the names belong to the library.
struct nvmlGpmMetric_t {
    unsigned int metricId;
    nvmlReturn_t nvmlReturn;
    double value;
    struct {
        char* shortName;
        char* longName;
        char* unit;
    } metricInfo;
};

/// nvmlGpmMetricsGet argument: version, numMetrics, the two samples and the metric ids are set by
/// the caller; the metrics are computed over the time between the samples.
struct nvmlGpmMetricsGet_t {
    unsigned int version;
    unsigned int numMetrics;
    nvmlGpmSample_t sample1;
    nvmlGpmSample_t sample2;
    nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
};

/// nvmlGpmQueryDeviceSupport argument; set version first.
struct nvmlGpmSupport_t {
    unsigned int version;
    unsigned int isSupportedDevice;
};

static_assert(sizeof(nvmlReturn_t) == 4);
static_assert(sizeof(nvmlDevice_t) == 8);
static_assert(sizeof(nvmlUtilization_t) == 8);
static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(offsetof(nvmlMemory_t, free) == 8 && offsetof(nvmlMemory_t, used) == 16);
static_assert(sizeof(nvmlMemory_v2_t) == 40 && nvmlMemory_v2 == 0x02000028u);
static_assert(offsetof(nvmlMemory_v2_t, total) == 8 && offsetof(nvmlMemory_v2_t, reserved) == 16);
static_assert(offsetof(nvmlMemory_v2_t, free) == 24 && offsetof(nvmlMemory_v2_t, used) == 32);
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16);
static_assert(offsetof(nvmlProcessInfo_v1_t, usedGpuMemory) == 8);
static_assert(sizeof(nvmlProcessInfo_v2_t) == 24);
static_assert(offsetof(nvmlProcessInfo_v2_t, usedGpuMemory) == 8);
static_assert(offsetof(nvmlProcessInfo_v2_t, gpuInstanceId) == 16);
static_assert(offsetof(nvmlProcessInfo_v2_t, computeInstanceId) == 20);
static_assert(sizeof(nvmlProcessDetail_v1_t) == 32);
static_assert(offsetof(nvmlProcessDetail_v1_t, usedGpuCcProtectedMemory) == 24);
static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32);
static_assert(offsetof(nvmlProcessUtilizationSample_t, timeStamp) == 8);
static_assert(offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16);
static_assert(offsetof(nvmlProcessUtilizationSample_t, memUtil) == 20);
static_assert(offsetof(nvmlProcessUtilizationSample_t, decUtil) == 28);
static_assert(sizeof(nvmlValue_t) == 8);
static_assert(sizeof(nvmlSample_t) == 16 && offsetof(nvmlSample_t, sampleValue) == 8);
static_assert(sizeof(nvmlPciInfo_t) == 68);
static_assert(offsetof(nvmlPciInfo_t, domain) == 16 && offsetof(nvmlPciInfo_t, busId) == 36);
static_assert(offsetof(nvmlPciInfo_t, pciSubSystemId) == 32);
static_assert(sizeof(nvmlTemperature_v1_t) == 12 && nvmlTemperature_v1 == 0x0100000cu);
static_assert(sizeof(nvmlFieldValue_t) == 40 && offsetof(nvmlFieldValue_t, timestamp) == 8);
static_assert(offsetof(nvmlFieldValue_t, valueType) == 24);
static_assert(offsetof(nvmlFieldValue_t, nvmlReturn) == 28 &&
              offsetof(nvmlFieldValue_t, value) == 32);

static_assert(sizeof(nvmlGpmMetric_t) == 40 && offsetof(nvmlGpmMetric_t, value) == 8);
static_assert(offsetof(nvmlGpmMetric_t, metricInfo) == 16);
static_assert(offsetof(nvmlGpmMetricsGet_t, sample1) == 8);
static_assert(offsetof(nvmlGpmMetricsGet_t, sample2) == 16);
static_assert(offsetof(nvmlGpmMetricsGet_t, metrics) == 24);
static_assert(sizeof(nvmlGpmMetricsGet_t) == 13344);
static_assert(sizeof(nvmlGpmSupport_t) == 8);

/// Events (nvmlEventSetCreate … nvmlEventSetWait_v2; Linux only). The set is opaque.
struct nvmlEventSet_st;
using nvmlEventSet_t = nvmlEventSet_st*;

/// Event type bits (nvmlDeviceRegisterEvents, nvmlDeviceGetSupportedEventTypes, eventType).
inline constexpr unsigned long long nvmlEventTypeSingleBitEccError = 0x1ULL;
inline constexpr unsigned long long nvmlEventTypeDoubleBitEccError = 0x2ULL;
inline constexpr unsigned long long nvmlEventTypePState = 0x4ULL;
inline constexpr unsigned long long nvmlEventTypeXidCriticalError = 0x8ULL;
inline constexpr unsigned long long nvmlEventTypeClock = 0x10ULL;
inline constexpr unsigned long long nvmlEventTypeAll = 0xFF9FULL;

/// What nvmlEventSetWait_v2 writes (NVML 11 and later: 32 bytes; the MIG ids are
/// NVML_INSTANCE_ID_NONE when the event is not attributable to an instance).
struct nvmlEventData_t {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData; ///< the Xid for XidCriticalError; 999 = unknown Xid
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
};
static_assert(sizeof(nvmlEventData_t) == 32 && offsetof(nvmlEventData_t, eventType) == 8);
static_assert(offsetof(nvmlEventData_t, eventData) == 16);
static_assert(offsetof(nvmlEventData_t, gpuInstanceId) == 24);
static_assert(offsetof(nvmlEventData_t, computeInstanceId) == 28);

/// Function types of the entry points in entry_points.def (one per distinct C signature).
using ReturnFn = nvmlReturn_t();
using ErrorStringFn = const char*(nvmlReturn_t);
using StringFn = nvmlReturn_t(char*, unsigned int);
using CountFn = nvmlReturn_t(unsigned int*);
using HandleByIndexFn = nvmlReturn_t(unsigned int, nvmlDevice_t*);
using DeviceStringFn = nvmlReturn_t(nvmlDevice_t, char*, unsigned int);
using DevicePciFn = nvmlReturn_t(nvmlDevice_t, nvmlPciInfo_t*);
using DeviceUintFn = nvmlReturn_t(nvmlDevice_t, unsigned int*);
using DeviceUllFn = nvmlReturn_t(nvmlDevice_t, unsigned long long*);
using DeviceStructFn = nvmlReturn_t(nvmlDevice_t, void*);
using DeviceUtilizationFn = nvmlReturn_t(nvmlDevice_t, nvmlUtilization_t*);
using DeviceSamplesFn = nvmlReturn_t(nvmlDevice_t, nvmlSamplingType_t, unsigned long long,
                                     nvmlValueType_t*, unsigned int*, nvmlSample_t*);
using DeviceProcessesFn = nvmlReturn_t(nvmlDevice_t, unsigned int*, void*);
using DeviceProcessUtilFn = nvmlReturn_t(nvmlDevice_t, nvmlProcessUtilizationSample_t*,
                                         unsigned int*, unsigned long long);
using DeviceTemperatureVFn = nvmlReturn_t(nvmlDevice_t, nvmlTemperature_v1_t*);
using DeviceTemperatureFn = nvmlReturn_t(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int*);
using DeviceClockFn = nvmlReturn_t(nvmlDevice_t, nvmlClockType_t, unsigned int*);
using DeviceMigModeFn = nvmlReturn_t(nvmlDevice_t, unsigned int*, unsigned int*);
using DeviceMigHandleFn = nvmlReturn_t(nvmlDevice_t, unsigned int, nvmlDevice_t*);
using DeviceFieldValuesFn = nvmlReturn_t(nvmlDevice_t, int, nvmlFieldValue_t*);
using DeviceGpmSupportFn = nvmlReturn_t(nvmlDevice_t, nvmlGpmSupport_t*);
using GpmSampleAllocFn = nvmlReturn_t(nvmlGpmSample_t*);
using GpmSampleFreeFn = nvmlReturn_t(nvmlGpmSample_t);
using DeviceGpmSampleFn = nvmlReturn_t(nvmlDevice_t, nvmlGpmSample_t);
using DeviceGpmMigSampleFn = nvmlReturn_t(nvmlDevice_t, unsigned int, nvmlGpmSample_t);
using GpmMetricsGetFn = nvmlReturn_t(nvmlGpmMetricsGet_t*);
/// nvmlDeviceGetNvLinkErrorCounter counters (nvmlNvLinkErrorCounter_t).
enum nvmlNvLinkErrorCounter_t : int {
    NVML_NVLINK_ERROR_DL_REPLAY = 0,
    NVML_NVLINK_ERROR_DL_RECOVERY = 1,
    NVML_NVLINK_ERROR_DL_CRC_FLIT = 2,
};
/// Links NVML can number (NVML_NVLINK_MAX_LINKS of the 11.8–13.2 headers; 13.3 says 36).
inline constexpr unsigned int k_nvlink_max_links = 18;
using DeviceNvLinkStateFn = nvmlReturn_t(nvmlDevice_t, unsigned int, unsigned int*);
using DeviceNvLinkErrorFn = nvmlReturn_t(nvmlDevice_t, unsigned int, nvmlNvLinkErrorCounter_t,
                                         unsigned long long*);
using EventSetCreateFn = nvmlReturn_t(nvmlEventSet_t*);
using EventSetFreeFn = nvmlReturn_t(nvmlEventSet_t);
using DeviceRegisterEventsFn = nvmlReturn_t(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
using EventSetWaitFn = nvmlReturn_t(nvmlEventSet_t, nvmlEventData_t*, unsigned int);

} // namespace gua::nvml
