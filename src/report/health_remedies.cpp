// SPDX-License-Identifier: Apache-2.0
// §8's health remedies (docs/health.md, docs/recommendations.md): each kind of §9 finding becomes
// one remedy whose worth is measured in its own terms and never joins the combined savings.
#include "report/health_remedies.hpp"

#include "audit/cost.hpp"
#include "audit/health.hpp"
#include "core/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace gua::report {

namespace health_remedies_cpp {

struct Text {
    const char* title;
    const char* remedy;
};

const std::map<std::string, Text>& texts() {
    static const std::map<std::string, Text> k_texts{
        {"thermal-throttling",
         {"Cool the cards that throttle on heat",
          "check the airflow through the chassis (blanking panels, blocked inlets, failed fans "
          "in `ipmitool sdr`), the fan curve and the datacenter inlet temperature; a hardware "
          "thermal slowdown is the board protecting itself: treat it as a cooling fault"}},
        {"power-capping",
         {"Review the power limit of the capped cards",
          "compare the enforced limit with the default and the maximum (`nvidia-smi -q -d "
          "POWER`); raise a limit set below the default where the rack's power budget allows "
          "(`nvidia-smi -pl`), or keep it as a deliberate efficiency choice; a power brake is an "
          "external signal: check the power supply"}},
        {"busy-but-light",
         {"Find what starves the busy-but-light cards",
          "profile the job for gaps between kernels (PyTorch profiler, Nsight Systems); raise the "
          "DataLoader's num_workers, pin_memory=True and prefetching, or decode on the GPU "
          "(DALI); batch more work per kernel (larger batches, CUDA graphs, torch.compile); "
          "overlap communication with compute in distributed jobs; or let several light jobs "
          "share one card (MPS, MIG)"}},
        {"memory-pressure",
         {"Give the jobs near full memory headroom before an out-of-memory error",
          "check the peak with the framework's memory tools (torch.cuda.memory_summary(), "
          "torch.cuda.memory._record_memory_history snapshots; JAX "
          "XLA_PYTHON_CLIENT_MEM_FRACTION); lower the batch size or enable activation "
          "checkpointing; a slow rise over a run is a leak to hunt with the same snapshots"}},
        {"ghost-memory",
         {"Release the memory that no live process holds",
          "list the card's processes on the host (`nvidia-smi "
          "--query-compute-apps=pid,used_memory --format=csv`) and in its containers; stop or "
          "restart the holder of a leaked context; keep persistence mode on "
          "(`nvidia-persistenced` or `nvidia-smi -pm 1`); with nothing left to stop, reset the "
          "idle card (`nvidia-smi --gpu-reset`)"}},
        {"tensor-idle",
         {"Move the math onto Tensor Cores",
          "enable mixed precision: AMP autocast with BF16 (or FP16 with GradScaler), TF32 "
          "matmuls (`torch.backends.cuda.matmul.allow_tf32 = True` or "
          "`torch.set_float32_matmul_precision(\"high\")`), FP8 on Hopper (Transformer Engine); "
          "then check that the tensor pipes' share rose in §9"}},
        {"dram-bound",
         {"Cut the memory traffic of bandwidth-bound work",
          "fuse kernels (torch.compile, FlashAttention / SDPA, fused optimizers and layer norms), "
          "keep activations in BF16 or FP8 to halve the bytes moved, and raise the batch size so "
          "that weights are reused from cache instead of re-read from DRAM"}},
        {"xid-application",
         {"Check the programs that faulted their cards (application Xids)",
          "the card is usually fine: run the job under compute-sanitizer or cuda-gdb, look for "
          "out-of-bounds accesses, traps and asserts; suspect the card only when different "
          "programs fault on it (then treat it as hardware)"}},
        {"xid-hardware",
         {"Drain, reset or replace the cards with hardware faults",
          "drain the card, reset it (`nvidia-smi --gpu-reset`) or power-cycle the node for a card "
          "that fell off the bus; check remapped rows (`nvidia-smi -q -d ROW_REMAPPER`); open a "
          "replacement request when the fault repeats after a reset"}},
        {"xid-driver",
         {"Reset the cards or update the driver after driver and firmware faults",
          "reset the GPU or reboot the node; install the newest driver of the branch; report a "
          "repeating GSP timeout (Xid 119/120) to NVIDIA with `nvidia-bug-report.sh`"}},
        {"xid-interconnect",
         {"Inspect the NVLink and chip-to-chip links that faulted",
          "read the link's state and error counters (`nvidia-smi nvlink -s`, `nvidia-smi nvlink "
          "-e`); reset the GPUs on the link; check the Fabric Manager's log and the bridges or "
          "switch trays when it repeats"}},
        {"nvlink-errors",
         {"Service the NVLink links that keep erring",
          "read the per-link counters (`nvidia-smi nvlink -e`) to find the link; reseat or "
          "replace its bridge or cable, check the NVSwitch trays and the Fabric Manager's log, "
          "and run `dcgmi diag -r 2` before the card takes multi-card jobs again"}},
        {"nvlink-down",
         {"Bring the NVLink links that went down back up",
          "list the links' state (`nvidia-smi nvlink -s`); restart the Fabric Manager on NVSwitch "
          "systems, reset the GPU, and have the bridge or tray inspected when a link stays down: "
          "collective operations fall back to slower paths or fail meanwhile"}},
        {"pcie-degraded",
         {"Restore the PCIe link of the cards that work below its maximum",
          "compare `nvidia-smi -q -d PCIE` (current against maximum generation and width) under "
          "load; reseat the card or its riser, check the slot's BIOS setting and the link's "
          "signal integrity; a narrower or slower link slows every host transfer"}},
        {"pcie-replays",
         {"Check the PCIe link whose replays exceed DCGM's limit",
          "a high replay rate is a marginal link: reseat the card or its riser, check the slot "
          "and cable, update the BIOS and retimer firmware; `dcgmi diag -r 2` tests the bus"}},
        {"row-remap-failure",
         {"Take the card whose row remapping failed out of service",
          "a failed remapping leaves a failing memory row in use: drain the card, reset it, and "
          "run the field diagnostic; NVIDIA's memory error management guide treats a remapping "
          "failure as a card to return (RMA)"}},
        {"imbalance",
         {"Rebalance multi-card work whose cards wait on each other",
          "profile the slow rank (uneven shards, a straggler node, an unbalanced pipeline stage) "
          "and rebalance the work, or request fewer cards when a job uses only some of them"}},
    };
    return k_texts;
}

/// Adds `hours` at `micros_per_gpu_hour` (nullopt: not priced) to an optional total.
void add(std::optional<double>& hours, std::optional<std::int64_t>& cents, double h,
         std::optional<std::int64_t> micros_per_gpu_hour) {
    hours = hours.value_or(0) + h;
    if (micros_per_gpu_hour) {
        cents = cents.value_or(0) + audit::share_cost_cents(h * static_cast<double>(k_us_per_hour),
                                                            *micros_per_gpu_hour);
    }
}

/// The clock lost on `g` that belongs to heat (or power): its clock-lost hours split between the
/// two in proportion to their shares of active time.
double clock_lost_part(const ThrottleFigures& t, bool thermal) {
    const double heat = t.thermal_share.value_or(0);
    const double power = t.power_share.value_or(0);
    if (!t.clock_lost_hours || heat + power <= 0) {
        return 0;
    }
    return *t.clock_lost_hours * (thermal ? heat : power) / (heat + power);
}

/// The card-hours and cents finding `f` on card `row` (priced at `micros` per GPU-hour) is
/// worth, and the basis of that figure, added to its remedy `r`.
void add_worth(HealthRemedy& r, const HealthFinding& f, const GpuHealthRow& row,
               std::optional<std::int64_t> micros, const std::vector<store::GpuRow>& gpus) {
    if (f.id == "thermal-throttling" || f.id == "power-capping") {
        const bool thermal = f.id == "thermal-throttling";
        add(r.addressed_gpu_hours, r.addressed_cents, f.share * row.throttle.events_hours, micros);
        add(r.at_most_gpu_hours, r.at_most_cents, clock_lost_part(row.throttle, thermal), micros);
        r.basis = "the active time lost to the lower clock (active time × (1 − SM "
                  "clock / highest), split between heat and power by their time); "
                  "compute-bound work finishes that much sooner at full clock, memory-bound "
                  "work gains less";
    } else if (f.id == "busy-but-light") {
        add(r.addressed_gpu_hours, r.addressed_cents, row.light.light_hours, micros);
        r.basis = "the light card-hours at the card's price; what a fix wins back depends on "
                  "the cause and is not estimated";
    } else if (f.id == "memory-pressure") {
        add(r.addressed_gpu_hours, r.addressed_cents, row.memory.pressure_hours, std::nullopt);
        r.basis = "card-hours one allocation away from an out-of-memory error; the work a "
                  "crash would lose is not estimated";
    } else if (f.id == "ghost-memory") {
        const auto card = std::find_if(gpus.begin(), gpus.end(),
                                       [&](const store::GpuRow& g) { return g.index == f.gpu; });
        if (card != gpus.end() && card->memory_total_mib && *card->memory_total_mib > 0 &&
            row.memory.ghost_gib_hours) {
            const double total_gib = static_cast<double>(*card->memory_total_mib) / 1024.0;
            add(r.addressed_gpu_hours, r.addressed_cents, *row.memory.ghost_gib_hours / total_gib,
                micros);
        }
        r.basis = "the ghost GiB-hours as a share of the card's memory, at the card's price";
    } else if (f.id == "tensor-idle") {
        const auto fp32 = static_cast<std::size_t>(audit::GpmMetric::fp32_active);
        const double hours = row.gpm.known_hours[fp32];
        add(r.addressed_gpu_hours, r.addressed_cents, hours, micros);
        add(r.at_most_gpu_hours, r.at_most_cents, hours * row.gpm.mean[fp32].value_or(0), micros);
        r.basis = "the time the FP32 pipes were busy: Tensor Cores do the same math many "
                  "times faster, so at most that time is won back (less where the work is "
                  "bound by memory or by the input pipeline)";
    } else if (f.id == "dram-bound") {
        const auto dram = static_cast<std::size_t>(audit::GpmMetric::dram_bw);
        add(r.addressed_gpu_hours, r.addressed_cents, row.gpm.known_hours[dram], micros);
        r.basis = "the active card-hours whose DRAM bandwidth was read, at the card's price; "
                  "what fusion wins back depends on the kernels and is not estimated";
    } else if (f.id.starts_with("xid-")) {
        r.basis = "a fault is an event: the work it ended is not estimated; held card time a "
                  "hardware, driver or interconnect fault stranded is in §3 as lost to faults";
    } else if (f.id.starts_with("nvlink-") || f.id.starts_with("pcie-") ||
               f.id == "row-remap-failure") {
        r.basis = "an interconnect or memory fault slows or endangers every job on the card; "
                  "what it costs is not estimated";
    } else if (f.id == "imbalance") {
        r.basis = "the identity's GPU-hours and cost are in §4 and §7; what rebalancing wins "
                  "back is not estimated";
    }
}

} // namespace health_remedies_cpp

std::vector<HealthRemedy> health_remedies(const HealthSection& h,
                                          const std::vector<GpuCostRow>& prices,
                                          const std::vector<store::GpuRow>& gpus) {
    using namespace health_remedies_cpp;
    std::map<std::string, HealthRemedy> by_id;
    for (const HealthFinding& f : h.findings) {
        const auto text = texts().find(f.id);
        if (text == texts().end()) {
            continue;
        }
        HealthRemedy& r = by_id[f.id];
        if (r.id.empty()) {
            r.id = f.id;
            r.title = text->second.title;
            r.remedy = text->second.remedy;
        }
        r.evidence.push_back(f.detail);
        if (std::find(r.gpus.begin(), r.gpus.end(), f.gpu) == r.gpus.end()) {
            r.gpus.push_back(f.gpu);
        }
        const auto row = std::find_if(h.gpus.begin(), h.gpus.end(),
                                      [&](const GpuHealthRow& g) { return g.index == f.gpu; });
        const auto price = std::find_if(prices.begin(), prices.end(),
                                        [&](const GpuCostRow& c) { return c.index == f.gpu; });
        const std::optional<std::int64_t> micros =
            price != prices.end() ? std::optional(price->micros_per_gpu_hour) : std::nullopt;
        if (row == h.gpus.end()) {
            continue;
        }
        add_worth(r, f, *row, micros, gpus);
    }
    std::vector<HealthRemedy> out;
    for (auto& [id, r] : by_id) {
        std::sort(r.gpus.begin(), r.gpus.end());
        out.push_back(std::move(r));
    }
    const auto worth = [](const HealthRemedy& r) {
        return std::max(r.addressed_cents.value_or(-1), r.at_most_cents.value_or(-1));
    };
    std::stable_sort(out.begin(), out.end(), [&](const HealthRemedy& a, const HealthRemedy& b) {
        return worth(a) != worth(b) ? worth(a) > worth(b) : a.id < b.id;
    });
    return out;
}

} // namespace gua::report
