// Share arithmetic for the report model.
#include "report/shares.hpp"

#include <algorithm>

namespace gua::report {

StateShares shares_of(const audit::StateTimes& t) {
    StateShares s;
    const double measured = static_cast<double>(t.active + t.idle_held + t.truly_idle);
    if (measured > 0) {
        s.active = static_cast<double>(t.active) / measured;
        s.idle_held = static_cast<double>(t.idle_held) / measured;
        s.truly_idle = static_cast<double>(t.truly_idle) / measured;
    }
    s.active_hours = to_hours(t.active);
    s.idle_held_hours = to_hours(t.idle_held);
    s.truly_idle_hours = to_hours(t.truly_idle);
    s.unmeasured_hours = to_hours(t.unmeasured);
    return s;
}

std::array<double, 4> bucket_shares(const std::array<DurationUs, 4>& b) {
    std::array<double, 4> out{};
    const double total = static_cast<double>(b[0] + b[1] + b[2] + b[3]);
    for (std::size_t i = 0; i < 4 && total > 0; ++i) {
        out[i] = static_cast<double>(b[i]) / total;
    }
    return out;
}

HeatCell heat_cell(const audit::StateTimes& t) {
    const StateShares s = shares_of(t);
    return HeatCell{t.total() > 0, s.active, s.idle_held, s.truly_idle, to_hours(t.total())};
}

std::string short_uuid(const std::string& uuid) {
    const std::size_t dash = uuid.find('-');
    if (dash == std::string::npos) {
        return uuid.substr(0, 12);
    }
    return uuid.substr(0, std::min(uuid.size(), dash + 9));
}

} // namespace gua::report
