// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the fake NVML driver's scenario JSON (tests/fake_nvml/README.md), parsed and
// its series evaluated the way the fake's entry points evaluate them.
#include "scenario.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const gua::fake_nvml::Scenario s = gua::fake_nvml::parse_scenario(
            std::string_view(reinterpret_cast<const char*>(data), size));
        volatile double sink = 0;
        for (const gua::fake_nvml::Device& d : s.devices) {
            for (const double t : {-1.0, 0.0, 0.5, 10.0, 1e6}) {
                sink = sink + d.util.at(t) + d.util.mean(t, t + d.util_period_s) +
                       d.power_mw.integral(0, t) + d.mem_util.at(t);
            }
        }
        for (const gua::fake_nvml::Process& p : s.processes) {
            sink = sink + p.memory_mib.at(p.start) + p.sm_util.mean(p.start, p.start + 1);
        }
    } catch (const std::exception&) {
        // a readable error: what the fake reports at nvmlInit
    }
    return 0;
}
