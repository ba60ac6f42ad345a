// SPDX-License-Identifier: Apache-2.0
// Idle-held streaks, forward and backward, with one rule: a card-tick of the card in which the
// process is not idle-held (or absent) ends its streak; time with no card-tick bridges it.
#include "audit/streak.hpp"

#include <algorithm>

namespace gua::audit {

namespace {

const HoldingSeen* find_seen(const std::vector<HoldingSeen>& seen, const ProcessKey& key) {
    for (const HoldingSeen& s : seen) {
        if (s.process == key) {
            return &s;
        }
    }
    return nullptr;
}

} // namespace

void StreakBook::observe(const std::string& gpu_uuid, TimeUs t0, DurationUs duration_us,
                         const std::vector<HoldingSeen>& seen) {
    std::erase_if(m_streaks, [&](const auto& item) {
        if (item.first.gpu_uuid != gpu_uuid) {
            return false;
        }
        const HoldingSeen* s = find_seen(seen, item.first.process);
        return s == nullptr || !s->idle_held;
    });
    for (const HoldingSeen& s : seen) {
        if (!s.idle_held) {
            continue;
        }
        auto [it, inserted] = m_streaks.try_emplace(HoldingKey{gpu_uuid, s.process});
        Streak& streak = it->second;
        if (inserted) {
            streak.since = t0;
        } else if (streak.last_end == t0 + duration_us) {
            continue; // the same process listed twice in one card-tick
        }
        streak.last_end = t0 + duration_us;
        streak.idle_us += duration_us;
    }
}

void StreakBook::seed(const HoldingKey& key, const Streak& streak) {
    m_streaks[key] = streak;
}

std::optional<Streak> StreakBook::find(const HoldingKey& key) const {
    const auto it = m_streaks.find(key);
    if (it == m_streaks.end()) {
        return std::nullopt;
    }
    return it->second;
}

StreakRewind::StreakRewind(TimeUs t0, DurationUs duration_us,
                           const std::vector<HoldingSeen>& newest) {
    for (const HoldingSeen& s : newest) {
        if (s.idle_held && !m_streaks.contains(s.process)) {
            m_streaks.emplace(s.process, Streak{t0, t0 + duration_us, duration_us});
            m_open.push_back(s.process);
        }
    }
}

bool StreakRewind::older(TimeUs t0, DurationUs duration_us, const std::vector<HoldingSeen>& seen) {
    std::erase_if(m_open, [&](const ProcessKey& key) {
        const HoldingSeen* s = find_seen(seen, key);
        if (s == nullptr || !s->idle_held) {
            return true;
        }
        Streak& streak = m_streaks.at(key);
        streak.since = t0;
        streak.idle_us += duration_us;
        return false;
    });
    return !m_open.empty();
}

} // namespace gua::audit
