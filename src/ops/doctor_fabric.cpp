// SPDX-License-Identifier: Apache-2.0
// Doctor's bus and interconnect checks from the GPUs' current readings: PCIe link width and
// generation against their maxima, row-remap failure, NVLink links down and error counters,
// persistence mode (docs/faults.md gives each rule and its source).
#include "nvml/open.hpp"
#include "ops/doctor.hpp"

#include <fmt/format.h>

namespace gua::ops {

namespace {

std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (const std::string& p : parts) {
        out += (out.empty() ? "" : "; ") + p;
    }
    return out;
}

/// A link narrower than its maximum at full generation is degraded (an idle link lowers its
/// generation first, so a narrow link at full speed is not idle power saving).
Finding pcie_finding(const std::vector<nvml::FabricReading>& gpus) {
    Finding f{"pcie_link", "PCIe links", Severity::ok, "", ""};
    std::vector<std::string> narrow;
    std::vector<std::string> slow;
    int read = 0;
    for (const nvml::FabricReading& g : gpus) {
        if (!g.pcie_gen || !g.pcie_gen_max || !g.pcie_width || !g.pcie_width_max) {
            continue;
        }
        ++read;
        const std::string now =
            fmt::format("GPU {}: gen {} of {}, x{} of x{}", g.index, *g.pcie_gen, *g.pcie_gen_max,
                        *g.pcie_width, *g.pcie_width_max);
        if (*g.pcie_width < *g.pcie_width_max && *g.pcie_gen >= *g.pcie_gen_max) {
            narrow.push_back(now);
        } else if (*g.pcie_gen < *g.pcie_gen_max || *g.pcie_width < *g.pcie_width_max) {
            slow.push_back(now);
        }
    }
    if (read == 0) {
        f.severity = Severity::info;
        f.message = "not read (the driver does not say)";
    } else if (!narrow.empty()) {
        f.severity = Severity::warn;
        f.message = "link narrower than it can be at full speed: " + join(narrow);
        f.fix = "reseat the card or its riser, check the slot's wiring in the board manual "
                "and the BIOS lane settings; `nvidia-smi -q -d PCIE` under load to confirm";
    } else if (!slow.empty()) {
        f.severity = Severity::info;
        f.message = "below their maximum now (normal while idle: the link slows down when the "
                    "GPU is not in use): " +
                    join(slow);
    } else {
        f.message = fmt::format("{} GPU{} at their maximum generation and width", read,
                                read == 1 ? "" : "s");
    }
    return f;
}

Finding remap_finding(const std::vector<nvml::FabricReading>& gpus) {
    Finding f{"row_remap", "row remapping", Severity::ok, "", ""};
    std::vector<std::string> failed;
    int read = 0;
    for (const nvml::FabricReading& g : gpus) {
        if (g.remap_failure) {
            ++read;
            if (*g.remap_failure) {
                failed.push_back(fmt::format("GPU {}", g.index));
            }
        }
    }
    if (read == 0) {
        f.severity = Severity::info;
        f.message = "not read (row remapping is Ampere and newer, and not read under MIG)";
    } else if (!failed.empty()) {
        f.severity = Severity::fail;
        f.message = "a memory row could not be remapped on " + join(failed);
        f.fix = "drain the card and have it inspected or replaced (DCGM fails a card on a row "
                "remap failure)";
    } else {
        f.message = fmt::format("no remap failure on {} GPU{}", read, read == 1 ? "" : "s");
    }
    return f;
}

Finding nvlink_finding(const std::vector<nvml::FabricReading>& gpus) {
    Finding f{"nvlink", "NVLink", Severity::ok, "", ""};
    std::vector<std::string> down;
    std::vector<std::string> errors;
    int with_links = 0;
    for (const nvml::FabricReading& g : gpus) {
        if (!g.nvlink_links) {
            continue;
        }
        ++with_links;
        if (g.nvlink_active.value_or(0) < *g.nvlink_links) {
            down.push_back(fmt::format("GPU {}: {} of {} links active", g.index,
                                       g.nvlink_active.value_or(0), *g.nvlink_links));
        }
        if (g.nvlink_replay.value_or(0) > 0 || g.nvlink_recovery.value_or(0) > 0) {
            errors.push_back(fmt::format("GPU {}: {} replay, {} recovery, {} CRC errors", g.index,
                                         g.nvlink_replay.value_or(0), g.nvlink_recovery.value_or(0),
                                         g.nvlink_crc.value_or(0)));
        }
    }
    if (with_links == 0) {
        f.severity = Severity::info;
        f.message = "no NVLink (or the driver does not say)";
        return f;
    }
    if (down.empty() && errors.empty()) {
        f.message = fmt::format("every link active, no replay or recovery error on {} GPU{}",
                                with_links, with_links == 1 ? "" : "s");
        return f;
    }
    f.severity = Severity::warn;
    std::vector<std::string> all = down;
    all.insert(all.end(), errors.begin(), errors.end());
    f.message = join(all) + " (counters since the driver loaded)";
    f.fix = "`nvidia-smi nvlink -s` and `-e`; reset the GPUs on a link that is down or counts "
            "errors, check the Fabric Manager and the bridges or switch trays";
    return f;
}

Finding persistence_finding(const std::vector<nvml::FabricReading>& gpus) {
    Finding f{"persistence", "persistence mode", Severity::ok, "", ""};
    std::vector<std::string> off;
    int read = 0;
    for (const nvml::FabricReading& g : gpus) {
        if (g.persistence) {
            ++read;
            if (!*g.persistence) {
                off.push_back(fmt::format("GPU {}", g.index));
            }
        }
    }
    if (read == 0) {
        f.severity = Severity::info;
        f.message = "not read";
    } else if (!off.empty()) {
        f.severity = Severity::warn;
        f.message = "off on " + join(off) +
                    ": the driver tears the card down when its last client exits (slow first "
                    "call, counters reset)";
        f.fix = "run nvidia-persistenced (or `nvidia-smi -pm 1`)";
    } else {
        f.message = fmt::format("on for {} GPU{}", read, read == 1 ? "" : "s");
    }
    return f;
}

} // namespace

std::vector<Finding> fabric_findings(const std::vector<nvml::FabricReading>& gpus) {
    return {pcie_finding(gpus), remap_finding(gpus), nvlink_finding(gpus),
            persistence_finding(gpus)};
}

} // namespace gua::ops
