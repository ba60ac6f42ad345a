// SPDX-License-Identifier: Apache-2.0
// NvmlSource: telemetry::DeviceSource on top of the NVML driver library (real or fake).
#pragma once

#include "nvml/card.hpp"
#include "nvml/gpm.hpp"
#include "nvml/library.hpp"
#include "nvml/notices.hpp"
#include "telemetry/device_source.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gua::nvml {

/// Enumerates cards (MIG instances as their own cards) and reads them through `Library`.
/// A card whose GPU fell off the bus is reported lost and re-probed on every later poll.
class NvmlSource final : public telemetry::DeviceSource {
  public:
    /// Takes ownership of an opened (initialized) library.
    explicit NvmlSource(std::unique_ptr<Library> library);

    /// Driver version from nvmlSystemGetDriverVersion; empty when unknown.
    std::string driver_version() override;
    /// Re-enumerates: physical GPUs by index; a GPU in MIG mode with instances is replaced by
    /// its instances (uuid "MIG-…", parent_uuid set). Indices without permission are skipped.
    std::vector<telemetry::DeviceInfo> devices() override;
    /// Reads every card once (enumerating first if devices() was never called).
    std::vector<telemetry::DevicePoll> poll(TimeUs now) override;
    /// The GPU-instance id of MIG instance `uuid` as last enumerated; nullopt otherwise.
    std::optional<unsigned> gpu_instance_of(const std::string& uuid) const override;
    /// Reads every card once into `out`, reusing its storage (no allocation on a steady poll).
    void poll_into(TimeUs now, std::vector<telemetry::DevicePoll>& out) override;

    /// Half the time the shortest utilization ring covers (capacity × period as observed),
    /// within [50 ms, 5 s]; 5 s when no card has a ring.
    DurationUs max_poll_span_us() const override;
    /// A line naming the cards whose utilization comes from once-per-poll snapshots (no sample
    /// ring: an old driver or a card that does not support it), with the error bound; empty
    /// when every card with utilization has a ring. May query the driver.
    std::string measurement_note() override;
    /// Lost ring samples and junk replies are logged there, rate-limited (default: nowhere).
    void set_notice_sink(std::function<void(const std::string&)> sink) override {
        m_notices.set_sink(std::move(sink));
    }

    /// The loaded library (bound symbols, path) for diagnostics.
    const Library& library() const { return *m_library; }
    /// Driver oddities worked around so far.
    const NvmlDiagnostics& diagnostics() const { return m_state.diagnostics; }

  private:
    void enumerate();
    void add_physical(unsigned int index, nvmlDevice_t handle, std::vector<Card>& fresh);
    void keep_lost(unsigned int index, std::vector<Card>& fresh) const;
    nvmlReturn_t describe(nvmlDevice_t handle, Card& card) const;
    bool reprobe(Card& card) const;
    /// Reads the card's GPM metrics into its poll (docs/health.md); a GPU lost meanwhile turns the
    /// poll into a lost one.
    void read_gpm(Card& card, TimeUs now, telemetry::DevicePoll& poll);

    std::unique_ptr<Library> m_library;
    std::vector<Card> m_cards;
    SourceState m_state;
    /// GPM sample rings by card uuid (declared after the library: freed before it shuts down).
    std::map<std::string, std::unique_ptr<GpmRing>> m_gpm;
    DiagnosticNotices m_notices;
    bool m_enumerated = false;
};

} // namespace gua::nvml
