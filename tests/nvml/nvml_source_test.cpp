// SPDX-License-Identifier: Apache-2.0
// NvmlSource on the fake driver: enumeration, memory, processes, sensors, ABI variants and
// faults (lost GPU, no permission, unsupported readings, growing process lists, MIG).
#include "nvml/fake_driver.hpp"
#include "nvml/nvml_source.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace gua::nvml {
namespace {

using nlohmann::json;
using telemetry::ProcessType;
using telemetry::UtilSource;
using testing::FakeDriver;
using testing::Variant;
using testing::wall_at;

json busy_gpu() {
    return {{"uuid", "GPU-0"},
            {"name", "NVIDIA H100 80GB HBM3"},
            {"pci_bus_id", "00000000:3B:00.0"},
            {"memory_total_mib", 81559},
            {"memory_reserved_mib", 500},
            {"util", {{0, 80}}},
            {"mem_util", {{0, 35}}},
            {"power_mw", {{0, 300000}}},
            {"temperature_c", {{0, 55}}},
            {"sm_clock_mhz", {{0, 1980}}},
            {"clock_event_reasons", {{0, 1}}},
            {"energy_start_mj", 1000},
            {"power_limit_mw", {{0, 400000}}},
            {"max_sm_clock_mhz", {{0, 1980}}},
            {"memory_temperature_c", {{0, 61}}},
            {"ecc_uncorrected", {{0, 2}}},
            {"remapped_rows_correctable", {{0, 3}}},
            {"remapped_rows_uncorrectable", {{0, 1}}},
            {"remap_pending", {{0, 1}}},
            {"pcie_replays", {{0, 7}}}};
}

json busy_scenario() {
    return {{"devices", {busy_gpu()}},
            {"processes",
             {{{"device", 0},
               {"pid", 4242},
               {"type", "compute"},
               {"memory_mib", {{0, 8000}}},
               {"sm_util", {{0, 80}}}},
              {{"device", 0},
               {"pid", 4242},
               {"type", "graphics"},
               {"memory_mib", {{0, 100}}},
               {"sm_util", {{0, 80}}}},
              {{"device", 0}, {"pid", 5000}, {"type", "mps"}, {"memory_mib", {{0, 2000}}}}}}};
}

const telemetry::ProcessReading* find(const telemetry::DevicePoll& poll, std::uint32_t pid,
                                      ProcessType type) {
    const auto it = std::find_if(poll.processes.begin(), poll.processes.end(),
                                 [&](const auto& p) { return p.pid == pid && p.type == type; });
    return it != poll.processes.end() ? &*it : nullptr;
}

TEST(NvmlSource, EnumeratesAndReadsEveryMetricOfAModernDriver) {
    FakeDriver fake(busy_scenario());
    auto source = fake.source();
    ASSERT_TRUE(source);
    EXPECT_EQ(source->driver_version(), "560.35.05");
    const auto devices = source->devices();
    ASSERT_EQ(devices.size(), 1u);
    EXPECT_EQ(devices[0].uuid, "GPU-0");
    EXPECT_EQ(devices[0].name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(devices[0].pci_bus_id, "00000000:3B:00.0");
    EXPECT_EQ(devices[0].memory_total_mib, 81559);
    EXPECT_EQ(devices[0].index, 0);
    EXPECT_TRUE(devices[0].parent_uuid.empty());

    const auto first = source->poll(wall_at(0));
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0].util_source, UtilSource::snapshot);
    EXPECT_FALSE(find(first[0], 4242, ProcessType::compute)->sm_util_pct.has_value());

    fake.set_time(5);
    const auto polls = source->poll(wall_at(5));
    ASSERT_EQ(polls.size(), 1u);
    const auto& poll = polls[0];
    EXPECT_FALSE(poll.lost);
    EXPECT_EQ(poll.read_errors, 0);
    EXPECT_EQ(poll.util_source, UtilSource::samples);
    EXPECT_EQ(poll.util.size(), 30u);
    EXPECT_NEAR(testing::poll_mean(poll), 80.0, 1e-9);
    EXPECT_EQ(poll.readings.mem_util_pct, 35);
    EXPECT_EQ(poll.readings.mem_used_mib, 10100); // _v2: reserved memory is not "used"
    EXPECT_EQ(poll.readings.power_mw, 300000);
    EXPECT_EQ(poll.readings.energy_mj, 1000 + 300000 * 5); // the running counter
    EXPECT_EQ(poll.readings.temperature_c, 55);
    EXPECT_EQ(poll.readings.sm_clock_mhz, 1980);
    EXPECT_EQ(poll.readings.clock_events, 1);
    EXPECT_EQ(poll.readings.power_limit_mw, 400000);
    EXPECT_EQ(poll.readings.max_sm_clock_mhz, 1980);
    EXPECT_EQ(poll.readings.mem_total_mib, 81559);
    EXPECT_EQ(poll.readings.mem_reserved_mib, 500);
    EXPECT_EQ(poll.readings.mem_temperature_c, 61); // field values
    EXPECT_EQ(poll.readings.ecc_uncorrected, 2);
    EXPECT_EQ(poll.readings.remapped_rows_cor, 3);
    EXPECT_EQ(poll.readings.remapped_rows_unc, 1);
    EXPECT_EQ(poll.readings.remap_pending, 1);
    EXPECT_EQ(poll.readings.pcie_replays, 7); // field 94
    EXPECT_FALSE(poll.readings.ghost_mib.has_value()) << "the fold derives it";
    ASSERT_EQ(poll.processes.size(), 3u);
    const auto* compute = find(poll, 4242, ProcessType::compute);
    ASSERT_NE(compute, nullptr);
    EXPECT_EQ(compute->mem_used_mib, 8000);
    EXPECT_EQ(compute->sm_util_pct, 80.0);
    EXPECT_EQ(find(poll, 4242, ProcessType::graphics)->sm_util_pct, 0.0); // counted once
    EXPECT_EQ(find(poll, 5000, ProcessType::mps)->mem_used_mib, 2000);
    EXPECT_EQ(find(poll, 5000, ProcessType::mps)->sm_util_pct, 0.0); // absent pid = 0 %
}

TEST(NvmlSource, PowerReadingsNoCardCanGiveAreDroppedAndCounted) {
    json gpu = busy_gpu();
    // −5 mW reaches gua as 4294967291 mW; 900 W is more than twice the 400 W limit.
    gpu["power_mw"] = {{0, -5}, {2, 900000}, {4, 500000}};
    FakeDriver fake(json{{"devices", {gpu}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    fake.set_time(1);
    auto polls = source->poll(wall_at(1));
    ASSERT_EQ(polls.size(), 1u);
    EXPECT_FALSE(polls[0].readings.power_mw.has_value());
    EXPECT_EQ(polls[0].readings.power_limit_mw, 400000);
    EXPECT_EQ(source->diagnostics().junk_power_readings, 1);
    fake.set_time(3);
    polls = source->poll(wall_at(3));
    EXPECT_FALSE(polls[0].readings.power_mw.has_value());
    EXPECT_EQ(source->diagnostics().junk_power_readings, 2);
    fake.set_time(5);
    polls = source->poll(wall_at(5));
    EXPECT_EQ(polls[0].readings.power_mw, 500000); // above the limit, but a card can
    EXPECT_EQ(source->diagnostics().junk_power_readings, 2);
    EXPECT_EQ(polls[0].read_errors, 0);
}

TEST(NvmlSource, AnImpossiblePowerLimitIsDroppedAndTheAbsoluteBoundApplies) {
    json gpu = busy_gpu();
    gpu["power_limit_mw"] = {{0, -1}};
    gpu["power_mw"] = {{0, 9000000}};
    FakeDriver fake(json{{"devices", {gpu}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    fake.set_time(1);
    const auto polls = source->poll(wall_at(1));
    EXPECT_FALSE(polls[0].readings.power_limit_mw.has_value());
    EXPECT_EQ(polls[0].readings.power_mw, 9000000);
    EXPECT_EQ(source->diagnostics().junk_power_readings, 1);
}

TEST(NvmlSource, ReadsALegacyDriverThroughV1Names) {
    FakeDriver fake(busy_scenario());
    auto source = fake.source(Variant::legacy);
    ASSERT_TRUE(source);
    EXPECT_EQ(source->devices().at(0).pci_bus_id, "0000:3B:00.0");
    source->poll(wall_at(0));
    fake.set_time(5);
    const auto poll = source->poll(wall_at(5)).at(0);
    EXPECT_EQ(poll.read_errors, 0);
    EXPECT_EQ(poll.util_source, UtilSource::snapshot);
    ASSERT_EQ(poll.util.size(), 1u);
    EXPECT_EQ(poll.util[0].pct, 80.0);
    EXPECT_EQ(poll.readings.mem_used_mib, 10600); // v1 counts reserved memory as used
    EXPECT_EQ(poll.readings.temperature_c, 55);
    EXPECT_EQ(poll.readings.clock_events, 1);
    EXPECT_EQ(poll.readings.power_limit_mw, 400000);
    EXPECT_EQ(poll.readings.max_sm_clock_mhz, 1980);
    EXPECT_EQ(poll.readings.mem_total_mib, 81559);
    EXPECT_FALSE(poll.readings.mem_reserved_mib.has_value()) << "v1 does not say";
    // No energy counter and no field values before R450: n/a, not 0, and not an error.
    EXPECT_FALSE(poll.readings.energy_mj.has_value());
    EXPECT_FALSE(poll.readings.mem_temperature_c.has_value());
    EXPECT_FALSE(poll.readings.ecc_uncorrected.has_value());
    EXPECT_FALSE(poll.readings.remapped_rows_cor.has_value());
    ASSERT_EQ(poll.processes.size(), 2u); // no MPS list before R450
    EXPECT_EQ(find(poll, 4242, ProcessType::compute)->mem_used_mib, 8000);
    EXPECT_FALSE(find(poll, 4242, ProcessType::compute)->sm_util_pct.has_value());
}

json three_processes() {
    json scenario = {{"devices", {busy_gpu()}}, {"processes", json::array()}};
    for (const auto& [pid, mib] : {std::pair{4242, 8000}, {4243, 3000}, {90001, 512}}) {
        scenario["processes"].push_back({{"device", 0}, {"pid", pid}, {"memory_mib", {{0, mib}}}});
    }
    return scenario;
}

void expect_three_processes(const telemetry::DevicePoll& poll) {
    ASSERT_EQ(poll.processes.size(), 3u);
    EXPECT_EQ(poll.processes[0].pid, 4242u);
    EXPECT_EQ(poll.processes[0].mem_used_mib, 8000);
    EXPECT_EQ(poll.processes[1].pid, 4243u);
    EXPECT_EQ(poll.processes[1].mem_used_mib, 3000);
    EXPECT_EQ(poll.processes[2].pid, 90001u);
    EXPECT_EQ(poll.processes[2].mem_used_mib, 512);
}

TEST(NvmlSource, ReadsR535ThirtyTwoByteEntries) {
    FakeDriver fake(three_processes());
    auto source = fake.source(Variant::r535);
    ASSERT_TRUE(source);
    const auto poll = source->poll(wall_at(0)).at(0);
    expect_three_processes(poll);
    EXPECT_EQ(source->diagnostics().stride_corrections, 0);
}

TEST(NvmlSource, SanityChecksCatchAStrideTheSymbolRuleGotWrong) {
    json scenario = three_processes();
    scenario["abi"] = {{"process_info_stride", 32}};
    FakeDriver fake(scenario);
    auto source = fake.source();
    ASSERT_TRUE(source);
    expect_three_processes(source->poll(wall_at(0)).at(0));
    EXPECT_EQ(source->diagnostics().stride_corrections, 1);
    fake.set_time(1);
    expect_three_processes(source->poll(wall_at(1)).at(0));
    EXPECT_EQ(source->diagnostics().stride_corrections, 1); // remembered
}

TEST(NvmlSource, TakesPidsFromTheEnvironmentAndCallsMissingSymbolsUnsupported) {
    setenv("GUA_TEST_NVML_PID", "31337", 1);
    json scenario = {
        {"devices", {busy_gpu()}},
        {"processes",
         {{{"device", 0}, {"pid_env", "GUA_TEST_NVML_PID"}, {"memory_mib", {{0, 640}}}}}},
        {"abi", {{"missing_symbols", {"nvmlDeviceGetPowerUsage"}}}}};
    FakeDriver fake(scenario);
    auto source = fake.source();
    unsetenv("GUA_TEST_NVML_PID");
    ASSERT_TRUE(source);
    const auto poll = source->poll(wall_at(0)).at(0);
    ASSERT_EQ(poll.processes.size(), 1u);
    EXPECT_EQ(poll.processes[0].pid, 31337u);
    EXPECT_EQ(poll.processes[0].mem_used_mib, 640);
    EXPECT_FALSE(poll.readings.power_mw.has_value());
    EXPECT_EQ(poll.read_errors, 0);
}

TEST(NvmlSource, LostGpuIsReportedWhileTheOtherIsReadAndIsReprobedLater) {
    json second = busy_gpu();
    second["uuid"] = "GPU-1";
    second["power_mw"] = {{0, 120000}};
    json scenario = {
        {"devices", {busy_gpu(), second}},
        {"faults", {{{"function", "*"}, {"device", 1}, {"from", 2}, {"to", 4}, {"error", 15}}}}};
    FakeDriver fake(scenario);
    auto source = fake.source();
    ASSERT_TRUE(source);
    ASSERT_EQ(source->devices().size(), 2u);
    fake.set_time(1);
    auto polls = source->poll(wall_at(1));
    EXPECT_FALSE(polls[1].lost);
    EXPECT_EQ(polls[1].readings.power_mw, 120000);

    fake.set_time(3);
    polls = source->poll(wall_at(3));
    ASSERT_EQ(polls.size(), 2u);
    EXPECT_FALSE(polls[0].lost);
    EXPECT_EQ(polls[0].readings.power_mw, 300000);
    EXPECT_TRUE(polls[1].lost);
    EXPECT_EQ(polls[1].uuid, "GPU-1");
    EXPECT_FALSE(polls[1].readings.power_mw.has_value());
    EXPECT_TRUE(polls[1].processes.empty());
    EXPECT_EQ(source->devices().size(), 2u); // still listed while lost

    fake.set_time(3.5);
    EXPECT_TRUE(source->poll(wall_at(3.5))[1].lost); // re-probe fails while it is still lost

    fake.set_time(5);
    polls = source->poll(wall_at(5));
    EXPECT_FALSE(polls[1].lost);
    EXPECT_EQ(polls[1].readings.power_mw, 120000);
    EXPECT_EQ(polls[1].read_errors, 0);
}

TEST(NvmlSource, SkipsADeviceWithoutPermission) {
    json forbidden = busy_gpu();
    forbidden["uuid"] = "GPU-1";
    forbidden["no_permission"] = true;
    json last = busy_gpu();
    last["uuid"] = "GPU-2";
    FakeDriver fake(json{{"devices", {busy_gpu(), forbidden, last}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    const auto devices = source->devices();
    ASSERT_EQ(devices.size(), 2u);
    EXPECT_EQ(devices[1].uuid, "GPU-2");
    EXPECT_EQ(devices[1].index, 2); // _v2 indices count the forbidden device
}

TEST(NvmlSource, UnsupportedIsMissingAndOtherErrorsAreCounted) {
    json device = busy_gpu();
    device["not_supported"] = {"nvmlDeviceGetPowerUsage",
                               "nvmlDeviceGetTotalEnergyConsumption",
                               "nvmlDeviceGetTemperature",
                               "nvmlDeviceGetTemperatureV",
                               "nvmlDeviceGetSamples",
                               "nvmlDeviceGetProcessUtilization",
                               "nvmlDeviceGetEnforcedPowerLimit",
                               "nvmlDeviceGetMaxClockInfo"};
    device["unsupported_fields"] = {82, 4, 142, 143, 144, 94};
    FakeDriver fake(json{{"devices", {device}},
                         {"faults", {{{"function", "nvmlDeviceGetClockInfo"}, {"error", 999}}}}});
    auto source = fake.source();
    ASSERT_TRUE(source);
    source->poll(wall_at(0));
    fake.set_time(2);
    const auto poll = source->poll(wall_at(2)).at(0);
    EXPECT_FALSE(poll.readings.power_mw.has_value());
    EXPECT_FALSE(poll.readings.energy_mj.has_value());
    EXPECT_FALSE(poll.readings.temperature_c.has_value());
    EXPECT_FALSE(poll.readings.sm_clock_mhz.has_value());
    EXPECT_FALSE(poll.readings.power_limit_mw.has_value());
    EXPECT_FALSE(poll.readings.max_sm_clock_mhz.has_value());
    EXPECT_FALSE(poll.readings.mem_temperature_c.has_value());
    EXPECT_FALSE(poll.readings.ecc_uncorrected.has_value());
    EXPECT_FALSE(poll.readings.remapped_rows_cor.has_value());
    EXPECT_FALSE(poll.readings.remapped_rows_unc.has_value());
    EXPECT_FALSE(poll.readings.remap_pending.has_value());
    EXPECT_FALSE(poll.readings.pcie_replays.has_value()) << "n/a, never 0";
    EXPECT_EQ(poll.readings.mem_reserved_mib, 500) << "the memory is still read";
    EXPECT_EQ(poll.read_errors, 1); // only the clock's UNKNOWN error counts
    EXPECT_EQ(poll.util_source, UtilSource::snapshot);
    EXPECT_EQ(poll.util.at(0).pct, 80.0);
    EXPECT_EQ(poll.readings.clock_events, 1);
}

TEST(NvmlSource, RetriesAProcessListThatGrowsBetweenCalls) {
    json scenario = three_processes();
    scenario["devices"][0]["process_list_growth"] = {{"extra", 10}, {"calls", 2}};
    FakeDriver fake(scenario);
    auto source = fake.source();
    ASSERT_TRUE(source);
    const auto poll = source->poll(wall_at(0)).at(0);
    EXPECT_EQ(poll.read_errors, 0);
    expect_three_processes(poll);

    source.reset(); // the next nvmlInit must reload the scenario
    scenario["devices"][0]["process_list_growth"] = {{"extra", 10}, {"calls", 50}};
    fake.write_scenario(scenario);
    auto endless = fake.source();
    ASSERT_TRUE(endless);
    const auto capped = endless->poll(wall_at(0)).at(0);
    EXPECT_EQ(capped.read_errors, 1);
    EXPECT_TRUE(capped.processes.empty());
}

TEST(NvmlSource, MigInstancesAreCardsWithoutUtilization) {
    json device = busy_gpu();
    device["mig"] = true;
    device["mig_instances"] = {
        {{"uuid", "MIG-a"}, {"memory_total_mib", 40000}, {"gpu_instance_id", 1}},
        {{"uuid", "MIG-b"}, {"memory_total_mib", 40000}, {"gpu_instance_id", 2}}};
    json scenario = {
        {"devices", {device}},
        {"processes",
         {{{"device", 0}, {"mig_instance", 0}, {"pid", 100}, {"memory_mib", {{0, 5000}}}},
          {{"device", 0}, {"mig_instance", 1}, {"pid", 200}, {"memory_mib", {{0, 7000}}}}}}};
    FakeDriver fake(scenario);
    auto source = fake.source();
    ASSERT_TRUE(source);
    const auto devices = source->devices();
    ASSERT_EQ(devices.size(), 2u);
    EXPECT_EQ(devices[0].uuid, "MIG-a");
    EXPECT_EQ(devices[0].parent_uuid, "GPU-0");
    EXPECT_EQ(devices[1].uuid, "MIG-b");
    EXPECT_EQ(devices[1].memory_total_mib, 40000);
    source->poll(wall_at(0));
    fake.set_time(5);
    const auto polls = source->poll(wall_at(5));
    ASSERT_EQ(polls.size(), 2u);
    for (const auto& poll : polls) {
        EXPECT_EQ(poll.util_source, UtilSource::none);
        EXPECT_TRUE(poll.util.empty());
        EXPECT_EQ(poll.read_errors, 0);
        ASSERT_EQ(poll.processes.size(), 1u);
        EXPECT_FALSE(poll.processes[0].sm_util_pct.has_value());
    }
    for (const auto& poll : polls) { // the card's sensors are the parent's: n/a per instance
        EXPECT_FALSE(poll.readings.power_mw.has_value());
        EXPECT_FALSE(poll.readings.energy_mj.has_value());
        EXPECT_FALSE(poll.readings.clock_events.has_value());
        EXPECT_FALSE(poll.readings.mem_temperature_c.has_value());
        EXPECT_EQ(poll.readings.mem_total_mib, 40000);
        EXPECT_EQ(poll.readings.mem_reserved_mib, 0);
    }
    EXPECT_EQ(polls[0].processes[0].pid, 100u);
    EXPECT_EQ(polls[0].readings.mem_used_mib, 5000);
    EXPECT_EQ(polls[1].processes[0].pid, 200u);
    EXPECT_EQ(polls[1].readings.mem_used_mib, 7000);
}

} // namespace
} // namespace gua::nvml
