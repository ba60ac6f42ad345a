// SPDX-License-Identifier: Apache-2.0
// nvml::Library against the fake driver: loading, symbol-version fallback, stride rule, init
// errors.
#include "nvml/fake_driver.hpp"
#include "nvml/library.hpp"
#include "nvml/open.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>
#include <string>

namespace gua::nvml {
namespace {

using testing::FakeDriver;
using testing::Variant;

const nlohmann::json k_one_gpu = {{"devices", {{{"uuid", "GPU-aaaa"}}}}};

std::string bound(const Library& library, Entry e) {
    const char* name = library.bindings()[entry_index(e)].name;
    return name != nullptr ? name : "";
}

TEST(NvmlLibrary, MissingExplicitPathHasTheDocumentedMessage) {
    const auto library = Library::open("/nonexistent/dir/libnvidia-ml.so.1");
    ASSERT_FALSE(library.ok());
    EXPECT_EQ(library.error().message,
              "NVML library /nonexistent/dir/libnvidia-ml.so.1 not found — is the NVIDIA driver "
              "installed? `gua demo` works without a GPU");
}

TEST(NvmlLibrary, MissingDriverHasTheDocumentedMessage) {
    if (void* real = dlopen("libnvidia-ml.so.1", RTLD_LAZY); real != nullptr) {
        dlclose(real);
        GTEST_SKIP() << "a libnvidia-ml.so.1 is loadable on this machine";
    }
    const auto library = Library::open("");
    ASSERT_FALSE(library.ok());
    EXPECT_EQ(library.error().message,
              "NVML library libnvidia-ml.so.1 not found — is the NVIDIA driver installed? "
              "`gua demo` works without a GPU");
}

TEST(NvmlLibrary, RefusesALibraryWithoutNvml) {
    const auto library = Library::open("libm.so.6");
    ASSERT_FALSE(library.ok());
    EXPECT_EQ(library.error().message,
              "NVML library libm.so.6 lacks nvmlInit_v2 (driver too old or not an NVML library)");
}

TEST(NvmlLibrary, BindsNewestNamesOfAModernDriver) {
    FakeDriver fake(k_one_gpu);
    auto library = fake.open();
    ASSERT_TRUE(library.ok()) << library.error().message;
    const Library& lib = *library.value();
    EXPECT_EQ(bound(lib, Entry::init), "nvmlInit_v2");
    EXPECT_EQ(bound(lib, Entry::device_get_count), "nvmlDeviceGetCount_v2");
    EXPECT_EQ(bound(lib, Entry::device_get_memory_info), "nvmlDeviceGetMemoryInfo_v2");
    EXPECT_EQ(bound(lib, Entry::device_get_compute_running_processes),
              "nvmlDeviceGetComputeRunningProcesses_v3");
    EXPECT_EQ(bound(lib, Entry::device_get_clocks_event_reasons),
              "nvmlDeviceGetCurrentClocksEventReasons");
    EXPECT_EQ(lib.variant(Entry::device_get_pci_info), 0);
    EXPECT_EQ(lib.process_info_stride(Entry::device_get_compute_running_processes), 24u);
    EXPECT_EQ(lib.driver_version(), "560.35.05");
}

TEST(NvmlLibrary, FallsBackToV1NamesOfALegacyDriver) {
    FakeDriver fake(k_one_gpu);
    auto library = fake.open(Variant::legacy);
    ASSERT_TRUE(library.ok()) << library.error().message;
    const Library& lib = *library.value();
    EXPECT_EQ(bound(lib, Entry::init), "nvmlInit");
    EXPECT_EQ(bound(lib, Entry::device_get_handle_by_index), "nvmlDeviceGetHandleByIndex");
    EXPECT_EQ(bound(lib, Entry::device_get_memory_info), "nvmlDeviceGetMemoryInfo");
    EXPECT_EQ(bound(lib, Entry::device_get_compute_running_processes),
              "nvmlDeviceGetComputeRunningProcesses");
    EXPECT_EQ(bound(lib, Entry::device_get_clocks_event_reasons),
              "nvmlDeviceGetCurrentClocksThrottleReasons");
    EXPECT_FALSE(lib.has(Entry::device_get_samples));
    EXPECT_FALSE(lib.has(Entry::device_get_mps_compute_running_processes));
    EXPECT_EQ(lib.process_info_stride(Entry::device_get_compute_running_processes), 16u);
    EXPECT_EQ(lib.driver_version(), "418.226.00");
}

TEST(NvmlLibrary, DetectsTheR535StrideWindowBySymbols) {
    FakeDriver fake(k_one_gpu);
    auto library = fake.open(Variant::r535);
    ASSERT_TRUE(library.ok()) << library.error().message;
    const Library& lib = *library.value();
    EXPECT_TRUE(lib.has(Entry::device_get_conf_compute_mem_size_info));
    EXPECT_FALSE(lib.has(Entry::device_get_running_process_detail_list));
    EXPECT_EQ(lib.process_info_stride(Entry::device_get_compute_running_processes), 32u);
    EXPECT_EQ(lib.process_info_stride(Entry::device_get_graphics_running_processes), 32u);
}

TEST(NvmlLibrary, VersionMismatchIsExplainedAndARetryCanSucceed) {
    nlohmann::json scenario = k_one_gpu;
    scenario["init_error"] = 18;
    FakeDriver fake(scenario);
    const auto failed = fake.open();
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.error().message.find(
                  "NVIDIA driver/library version mismatch (driver upgraded without reboot?)"),
              std::string::npos)
        << failed.error().message;
    fake.write_scenario(k_one_gpu);
    const auto retried = fake.open();
    ASSERT_TRUE(retried.ok()) << retried.error().message;
}

TEST(NvmlLibrary, OtherInitErrorsNameTheDriverText) {
    nlohmann::json scenario = k_one_gpu;
    scenario["init_error"] = 9;
    FakeDriver fake(scenario);
    const auto failed = fake.open();
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.error().message, "NVML initialization failed: Driver Not Loaded (error 9)");
}

TEST(NvmlLibrary, TheFakeRefusesNumbersItsFieldsCannotHold) {
    // Found by fuzz_scenario given longer: converting these was undefined behaviour.
    std::vector<nlohmann::json> bad;
    for (const nlohmann::json& init :
         {nlohmann::json(2e10), nlohmann::json(1.5), nlohmann::json(-3e9), nlohmann::json("9")}) {
        nlohmann::json s = k_one_gpu;
        s["init_error"] = init;
        bad.push_back(s);
    }
    for (const auto& [key, value] :
         std::vector<std::pair<std::string, nlohmann::json>>{{"ring_size", 1e30},
                                                             {"ring_size", -1},
                                                             {"memory_total_mib", "x"},
                                                             {"util_period_s", 0},
                                                             {"unsupported_fields", {1e12}}}) {
        nlohmann::json s = k_one_gpu;
        s["devices"][0][key] = value;
        bad.push_back(s);
    }
    for (const nlohmann::json& scenario : bad) {
        FakeDriver fake(scenario);
        const auto failed = fake.open();
        ASSERT_FALSE(failed.ok()) << scenario.dump();
        EXPECT_EQ(failed.error().message, "NVML initialization failed: Unknown Error (error 999)")
            << scenario.dump();
    }
}

TEST(NvmlLibrary, ErrorStringCoversEveryCode) {
    FakeDriver fake(k_one_gpu);
    auto library = fake.open();
    ASSERT_TRUE(library.ok());
    EXPECT_EQ(library.value()->error_string(NVML_ERROR_GPU_IS_LOST), "GPU is lost");
    EXPECT_EQ(library.value()->error_string(static_cast<nvmlReturn_t>(12345)), "Unknown Error");
    for (int code = 0; code <= 30; ++code) {
        EXPECT_FALSE(library.value()->error_string(static_cast<nvmlReturn_t>(code)).empty());
    }
}

TEST(NvmlLibrary, OpenSourceTakesTheLibraryFromTheEnvironment) {
    FakeDriver fake(k_one_gpu);
    setenv(k_library_env, testing::fake_library_path(Variant::modern).c_str(), 1);
    auto source = open_nvml_source("");
    unsetenv(k_library_env);
    ASSERT_TRUE(source.ok()) << source.error().message;
    EXPECT_EQ(source.value()->driver_version(), "560.35.05");
    ASSERT_EQ(source.value()->devices().size(), 1u);
    EXPECT_EQ(source.value()->devices()[0].uuid, "GPU-aaaa");
    const auto overridden = open_nvml_source("/nonexistent/libnvidia-ml.so.1");
    EXPECT_FALSE(overridden.ok());
}

} // namespace
} // namespace gua::nvml
