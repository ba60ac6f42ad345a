// Real and simulated clocks.
#include "core/clock.hpp"

#include <algorithm>
#include <ctime>

namespace gua {

TimeUs SystemClock::wall_now() {
    return gua::wall_now();
}

std::int64_t SystemClock::mono_now() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * k_us_per_second + ts.tv_nsec / 1000;
}

void SystemClock::sleep_until(std::int64_t deadline, const std::atomic<bool>& stop) {
    while (!stop.load(std::memory_order_relaxed)) {
        const std::int64_t now = mono_now();
        if (now >= deadline) {
            return;
        }
        const std::int64_t step = std::min<std::int64_t>(deadline - now, 100 * k_us_per_ms);
        timespec ts{static_cast<time_t>(step / k_us_per_second),
                    static_cast<long>((step % k_us_per_second) * 1000)};
        nanosleep(&ts, nullptr);
    }
}

void SimulatedClock::sleep_until(std::int64_t deadline, const std::atomic<bool>& stop) {
    if (!stop.load(std::memory_order_relaxed)) {
        m_mono = std::max(m_mono, deadline);
    }
}

} // namespace gua
