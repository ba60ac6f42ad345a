// SPDX-License-Identifier: Apache-2.0
// Reading the rollup_gpu table's state columns, a week of hours per read transaction.
#include "store/card_hours.hpp"

#include <algorithm>

namespace gua::store {

std::vector<CardHour> read_card_hours(Database& db, std::int64_t first_hour,
                                      std::int64_t end_hour) {
    constexpr std::int64_t k_week_hours = 7 * 24;
    std::vector<CardHour> out;
    Statement st = db.prepare("SELECT hour, gpu_id, active_us, idle_held_us, truly_idle_us, "
                              "unmeasured_us FROM rollup_gpu WHERE hour >= ?1 AND hour < ?2 "
                              "ORDER BY hour, gpu_id");
    for (std::int64_t from = first_hour; from < end_hour; from += k_week_hours) {
        const ReadTransaction tx(db);
        st.bind(1, std::int64_t{from});
        st.bind(2, std::int64_t{std::min(end_hour, from + k_week_hours)});
        while (st.step()) {
            out.push_back(
                CardHour{st.int64(0), st.int64(1),
                         audit::StateTimes{st.int64(2), st.int64(3), st.int64(4), st.int64(5)}});
        }
        st.reset();
    }
    return out;
}

} // namespace gua::store
