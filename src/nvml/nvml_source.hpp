// SPDX-License-Identifier: Apache-2.0
// NvmlSource: telemetry::DeviceSource on top of the NVML driver library (real or fake).
#pragma once

#include "nvml/card.hpp"
#include "nvml/gpm.hpp"
#include "nvml/library.hpp"
#include "nvml/notices.hpp"
#include "nvml/open.hpp"
#include "telemetry/device_source.hpp"
#include "telemetry/fault_event.hpp"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gua::nvml {

/// Enumerates cards (MIG instances as their own cards) and reads them through `Library`.
/// A card whose GPU fell off the bus is reported lost and re-probed on every later poll. Cards
/// are enumerated again every k_enumeration_period_us, and at once when an index the driver
/// counts but could not open opens: a card seen before stays listed (lost) while its index does
/// not open; a card first seen mid-run is read from then on (docs/measurement.md, "Cards that
/// come and go").
class NvmlSource final : public telemetry::DeviceSource, public telemetry::FaultStreamProvider {
  public:
    /// Takes ownership of an opened (initialized) library.
    explicit NvmlSource(std::unique_ptr<Library> library);

    /// Driver version from nvmlSystemGetDriverVersion; empty when unknown.
    std::string driver_version() override;
    /// How often the cards are enumerated again when nothing suggests a change.
    static constexpr DurationUs k_enumeration_period_us = 60 * k_us_per_second;

    /// The cards known now, lost ones included (enumerating first if never done): physical GPUs
    /// by index; a GPU in MIG mode with instances is replaced by its instances (uuid "MIG-…",
    /// parent_uuid set). Indices that do not open (no permission, lost) are in
    /// unopened_devices().
    std::vector<telemetry::DeviceInfo> devices() override;
    /// Indices the driver counts that did not open at the last enumeration, with the error.
    std::vector<telemetry::UnopenedDevice> unopened_devices() override;
    /// Lists the last physical card of `known` at each unopened index as lost (see
    /// DeviceSource::expect_devices).
    void expect_devices(const std::vector<telemetry::DeviceInfo>& known) override;
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

    /// Xid events of the physical GPUs enumerated now, waited for on the stream's own thread
    /// (nvml/events.hpp). The stream must be destroyed before this source.
    std::unique_ptr<telemetry::FaultStream> open_fault_stream() override;

    /// PCIe link, row-remap failure, persistence mode and NVLink of the physical GPUs, now.
    std::vector<FabricReading> read_fabric();

    /// The loaded library (bound symbols, path) for diagnostics.
    const Library& library() const { return *m_library; }
    /// Driver oddities worked around so far.
    const NvmlDiagnostics& diagnostics() const { return m_state.diagnostics; }

  private:
    /// An index the driver counts that did not open: which call failed, and how.
    struct Unopened {
        unsigned int index = 0;
        const char* function = "";
        nvmlReturn_t rc = NVML_SUCCESS;
    };

    /// Enumerates the cards again; `now` is the poll's time (nullopt outside a poll).
    void enumerate(std::optional<TimeUs> now);
    /// True when the cards should be enumerated before the poll at `now`.
    bool enumeration_due(TimeUs now);
    /// Adds the card(s) of a physical GPU; returns the error that kept it from opening.
    nvmlReturn_t add_physical(unsigned int index, nvmlDevice_t handle, std::vector<Card>& fresh);
    /// Carries the state of cards already known into `fresh` and keeps the known cards that did
    /// not open again as lost.
    void merge_known(std::vector<Card>& fresh, unsigned int count);
    /// Log lines for indices that stopped or started opening since the last lines.
    void report_unopened();
    nvmlReturn_t describe(nvmlDevice_t handle, Card& card) const;
    bool reprobe(Card& card) const;
    /// Reads the card's GPM metrics into its poll (docs/health.md); a GPU lost meanwhile turns the
    /// poll into a lost one.
    void read_gpm(Card& card, TimeUs now, telemetry::DevicePoll& poll);
    /// Says once when polls `span_us` apart come faster than 1.5 periods of a card's ring: polls
    /// that find no new sample then leave their span unmeasured while the card is busy.
    void note_fast_polls(DurationUs span_us);

    std::unique_ptr<Library> m_library;
    std::vector<Card> m_cards;
    SourceState m_state;
    /// GPM sample rings by card uuid (declared after the library: freed before it shuts down).
    std::map<std::string, std::unique_ptr<GpmRing>> m_gpm;
    DiagnosticNotices m_notices;
    bool m_enumerated = false;
    std::optional<TimeUs> m_last_enumeration; ///< poll time of the last enumeration
    std::optional<TimeUs> m_last_poll;        ///< time of the previous poll
    bool m_fast_polls_said = false;           ///< note_fast_polls() wrote its line
    bool m_count_failed = false;              ///< nvmlDeviceGetCount failed: try at every poll
    std::vector<Unopened> m_unopened;
    std::vector<telemetry::UnopenedDevice> m_reported_unopened; ///< as last logged
};

} // namespace gua::nvml
