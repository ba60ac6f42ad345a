// SPDX-License-Identifier: Apache-2.0
// KmsgReader: open, the read loop (records, EAGAIN, EPIPE, a tailed regular file), and the
// conversion of Xid lines into fault events.
#include "faults/kmsg_reader.hpp"

#include "core/time.hpp"
#include "faults/kmsg.hpp"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

namespace gua::faults {

namespace {

/// How long one poll() waits: the most a stop waits for the thread.
constexpr int k_poll_ms = 250;
/// A "fallen off the bus" line within this of an Xid 79 line of the same GPU is the same event.
constexpr std::int64_t k_same_79_us = 10 * k_us_per_second;

std::int64_t monotonic_us() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * k_us_per_second + ts.tv_nsec / 1000;
}

std::string open_error(const std::string& path, int err) {
    if (err == EPERM || err == EACCES) {
        return fmt::format("kernel log: cannot read {}: {} (needs root or CAP_SYSLOG where "
                           "kernel.dmesg_restrict=1); Xids come from NVML events only",
                           path, std::strerror(err));
    }
    return fmt::format("kernel log: cannot read {}: {}; Xids come from NVML events only", path,
                       std::strerror(err));
}

} // namespace

KmsgReader::KmsgReader(KmsgOptions options) : m_options(std::move(options)) {
    for (const telemetry::DeviceInfo& card : m_options.cards) {
        if (card.parent_uuid.empty()) {
            if (const std::string pci = kmsg_pci_of(card.pci_bus_id); !pci.empty()) {
                m_uuid_of_pci[pci] = card.uuid;
            }
        }
    }
    m_fd = UniqueFd(::open(m_options.path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!m_fd.valid()) {
        m_description = open_error(m_options.path, errno);
        return;
    }
    struct stat st {};
    m_regular_file = ::fstat(m_fd.get(), &st) == 0 && S_ISREG(st.st_mode);
    m_description = fmt::format("kernel log: reading Xid lines from {}", m_options.path);
    m_thread = std::jthread([this](const std::stop_token& stop) { run(stop); });
}

KmsgReader::~KmsgReader() {
    if (m_thread.joinable()) {
        m_thread.request_stop();
        m_thread.join();
    }
}

std::string KmsgReader::boot_id() {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string id;
    std::getline(in, id);
    return id;
}

void KmsgReader::drain(std::vector<telemetry::FaultEvent>& out) {
    std::lock_guard lock(m_mutex);
    for (telemetry::FaultEvent& e : m_pending) {
        out.push_back(std::move(e));
    }
    m_pending.clear();
}

void KmsgReader::run(const std::stop_token& stop) {
    try {
        std::array<char, 8192> buf{}; // one /dev/kmsg record fits (larger ones: EINVAL)
        while (!stop.stop_requested()) {
            const ssize_t n = ::read(m_fd.get(), buf.data(), buf.size());
            if (n > 0) {
                m_partial.append(buf.data(), static_cast<std::size_t>(n));
                for (std::size_t nl; (nl = m_partial.find('\n')) != std::string::npos;) {
                    on_line(std::string_view(m_partial).substr(0, nl));
                    m_partial.erase(0, nl + 1);
                }
                if (m_partial.size() > buf.size()) {
                    m_partial.clear(); // no newline in a whole buffer: not a log
                }
                continue;
            }
            if (n < 0 && errno == EPIPE) {
                ++m_lost; // records overwritten before we read them; the next read goes on
                continue;
            }
            if (n < 0 && errno != EAGAIN && errno != EINTR && errno != EINVAL) {
                return;
            }
            pollfd p{m_fd.get(), POLLIN, 0};
            if (m_regular_file || ::poll(&p, 1, k_poll_ms) <= 0) {
                if (m_regular_file) {
                    ::usleep(static_cast<useconds_t>(k_poll_ms) * 1000 / 2); // tail the file
                }
            }
        }
    } catch (...) { // nothing escapes a thread; the reader just goes quiet
    }
}

void KmsgReader::on_line(std::string_view line) {
    const std::optional<KmsgRecord> record = parse_kmsg_record(line);
    if (!record || (m_options.after_seq && record->seq <= *m_options.after_seq)) {
        return;
    }
    if (const auto gpu = parse_gpu_at_pci(record->text)) {
        m_uuid_of_pci[gpu->pci] = gpu->uuid;
        return;
    }
    if (const auto xid = parse_xid_line(record->text)) {
        telemetry::FaultEvent e;
        e.xid = xid->xid;
        e.pid = xid->pid;
        e.process_name = xid->name;
        e.message = xid->message;
        e.gpu_instance = xid->gpu_instance;
        e.compute_instance = xid->compute_instance;
        if (xid->xid == 79) {
            const auto last = m_last_79.find(xid->pci);
            const bool same_fall =
                last != m_last_79.end() && record->mono_us - last->second <= k_same_79_us;
            m_last_79[xid->pci] = record->mono_us;
            if (same_fall) {
                return; // the "fallen off the bus" line of this fall came first
            }
        }
        emit(xid->pci, record->seq, record->mono_us, std::move(e));
        return;
    }
    std::string fallen;
    if (const auto off = parse_fallen_off(record->text)) {
        if (off->multi_line) {
            m_fallen_pci = off->pci;
            return;
        }
        fallen = off->pci;
    } else if (!m_fallen_pci.empty() &&
               record->text.find("fallen off the bus") != std::string_view::npos) {
        fallen = std::exchange(m_fallen_pci, std::string{});
    }
    if (fallen.empty()) {
        return;
    }
    const auto last = m_last_79.find(fallen);
    if (last != m_last_79.end() && record->mono_us - last->second <= k_same_79_us) {
        return; // the Xid 79 line of the same fall
    }
    m_last_79[fallen] = record->mono_us;
    telemetry::FaultEvent e;
    e.xid = 79;
    e.message = std::string(record->text);
    emit(fallen, record->seq, record->mono_us, std::move(e));
}

void KmsgReader::emit(const std::string& pci, std::uint64_t seq, std::int64_t mono_us,
                      telemetry::FaultEvent event) {
    event.at_us = wall_now() - (monotonic_us() - mono_us);
    event.pci_bus_id = pci;
    if (const auto it = m_uuid_of_pci.find(pci); it != m_uuid_of_pci.end()) {
        event.uuid = it->second;
    }
    event.sources = telemetry::fault_from_kmsg;
    event.boot_id = m_options.boot_id;
    event.kmsg_seq = seq;
    std::lock_guard lock(m_mutex);
    m_pending.push_back(std::move(event));
}

} // namespace gua::faults
