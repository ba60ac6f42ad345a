// SPDX-License-Identifier: Apache-2.0
// KmsgReader: the NVIDIA driver's Xid lines read from the kernel log (/dev/kmsg, which needs
// root or CAP_SYSLOG where kernel.dmesg_restrict=1) on a thread of its own.
#pragma once

#include "core/fd.hpp"
#include "telemetry/fault_event.hpp"
#include "telemetry/model.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace gua::faults {

/// What the reader reads and what it skips.
struct KmsgOptions {
    std::string path = "/dev/kmsg"; ///< a regular file is read and then tailed (tests)
    std::string boot_id;            ///< this boot's id (/proc/sys/kernel/random/boot_id)
    /// Records up to this sequence number are skipped (stored by an earlier run of this boot).
    std::optional<std::uint64_t> after_seq;
    /// The cards, so that a PCI address names a card; the log's "GPU at PCI" lines add to them.
    std::vector<telemetry::DeviceInfo> cards;
};

/// Reads the kernel log from its first record (skipping those already stored), turning each Xid
/// line (and a "fallen off the bus" line, as Xid 79) into a FaultEvent. Opened by the
/// constructor: when that fails, describe() says why and no thread runs.
class KmsgReader final : public telemetry::FaultStream {
  public:
    explicit KmsgReader(KmsgOptions options);
    ~KmsgReader() override;
    KmsgReader(const KmsgReader&) = delete;
    KmsgReader& operator=(const KmsgReader&) = delete;

    void drain(std::vector<telemetry::FaultEvent>& out) override;
    std::string describe() const override { return m_description; }
    /// True when the log opened (the thread runs).
    bool readable() const { return m_fd.valid(); }

    /// This boot's id, or "" when /proc does not say.
    static std::string boot_id();

  private:
    void run(const std::stop_token& stop);
    /// One line of the log (a record, or a continuation line, which is ignored).
    void on_line(std::string_view line);
    void emit(const std::string& pci, std::uint64_t seq, std::int64_t mono_us,
              telemetry::FaultEvent event);

    KmsgOptions m_options;
    UniqueFd m_fd;
    bool m_regular_file = false;
    std::string m_description;
    std::map<std::string, std::string> m_uuid_of_pci; ///< "dddd:bb:dd" → "GPU-…"
    std::map<std::string, std::int64_t> m_last_79;    ///< pci → monotonic µs of its last 79
    std::string m_fallen_pci; ///< the three-line "fallen off" form's GPU, until its last line
    std::string m_partial;    ///< bytes of a line not yet ended (regular files)
    std::uint64_t m_lost = 0; ///< records overwritten before they were read (EPIPE)
    std::mutex m_mutex;
    std::vector<telemetry::FaultEvent> m_pending; ///< guarded by m_mutex
    std::jthread m_thread;                        ///< last: joined first
};

} // namespace gua::faults
