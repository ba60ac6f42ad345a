// SPDX-License-Identifier: Apache-2.0
// MappingDirSource: inotify on the mapping directory, a rescan per event batch.
#include "alloc/mapping_source.hpp"

#include "alloc/mapping_dir.hpp"

#include <array>
#include <cerrno>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

namespace gua::alloc {
namespace {

constexpr std::uint32_t k_watch_mask = IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE |
                                       IN_MOVED_TO | IN_MOVED_FROM | IN_ATTRIB | IN_DELETE_SELF |
                                       IN_MOVE_SELF | IN_ONLYDIR;

// Grace after the last rescan before the source counts as stalled: three missed rescans.
constexpr int k_grace_rescans = 3;

// Reads and discards every queued inotify event; true when the watch itself went away.
bool drain(int fd, int watch) {
    alignas(inotify_event) std::array<char, 4096> buffer{};
    bool lost = false;
    for (;;) {
        const ssize_t got = ::read(fd, buffer.data(), buffer.size());
        if (got <= 0) {
            return lost;
        }
        for (ssize_t at = 0; at < got;) {
            const auto* event = reinterpret_cast<const inotify_event*>(buffer.data() + at);
            lost = lost || (event->wd == watch && (event->mask & IN_IGNORED) != 0);
            at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
        }
    }
}

} // namespace

MappingDirSource::MappingDirSource(std::string dir, DurationUs rescan_us,
                                   std::function<TimeUs()> clock)
    : m_dir(std::move(dir)), m_rescan_us(rescan_us), m_clock(std::move(clock)),
      m_inotify(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)),
      m_wake(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)), m_timeline(k_grace_rescans * rescan_us) {
    add_watch();
    rescan(); // the first reading exists before the constructor returns
    m_thread = std::jthread([this](std::stop_token stop) { run(std::move(stop)); });
}

MappingDirSource::~MappingDirSource() {
    m_thread.request_stop();
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = ::write(m_wake.get(), &one, sizeof one);
}

bool MappingDirSource::add_watch() {
    if (m_inotify.valid() && m_watch < 0) {
        m_watch = ::inotify_add_watch(m_inotify.get(), m_dir.c_str(), k_watch_mask);
    }
    return m_watch >= 0;
}

void MappingDirSource::rescan() {
    const TimeUs at = m_clock();
    Snapshot snapshot = read_mapping_dir(m_dir);
    const std::lock_guard lock(m_mutex);
    m_timeline.record(at, std::move(snapshot));
    ++m_scans;
}

void MappingDirSource::run(std::stop_token stop) {
    while (!stop.stop_requested()) {
        std::array<pollfd, 2> fds{{{m_inotify.get(), POLLIN, 0}, {m_wake.get(), POLLIN, 0}}};
        const int timeout_ms = static_cast<int>(m_rescan_us / k_us_per_ms);
        const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
        if (stop.stop_requested()) {
            break;
        }
        if (ready < 0 && errno != EINTR) {
            break; // cannot happen with valid descriptors; readers then see "source stalled"
        }
        if (ready > 0 && (fds[0].revents & POLLIN) != 0 && drain(m_inotify.get(), m_watch)) {
            m_watch = -1; // the directory was removed or moved away: watch it again once it exists
        }
        add_watch();
        rescan();
    }
}

std::string MappingDirSource::describe() const {
    return "mapping directory " + m_dir;
}

std::vector<Segment> MappingDirSource::query(const CardQuery& card, TimeUs begin,
                                             TimeUs end) const {
    const std::lock_guard lock(m_mutex);
    return m_timeline.query(card, begin, end);
}

void MappingDirSource::forget_before(TimeUs before) {
    const std::lock_guard lock(m_mutex);
    m_timeline.forget_before(before);
}

std::uint64_t MappingDirSource::scans() const {
    const std::lock_guard lock(m_mutex);
    return m_scans;
}

} // namespace gua::alloc
