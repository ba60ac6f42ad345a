// SPDX-License-Identifier: Apache-2.0
// Sorting and filtering the holder rows of `gua top`.
#include "live/view.hpp"

#include <algorithm>
#include <cctype>

namespace gua::live {

namespace {

std::string lower_ascii(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

std::string_view order_of(HolderSort sort) {
    switch (sort) {
    case HolderSort::idle:
        return "longest idle-held first";
    case HolderSort::memory:
        return "most memory first";
    case HolderSort::sm:
        return "highest SM % first";
    case HolderSort::user:
        return "by user";
    case HolderSort::standard:
        break;
    }
    return "idle-held memory × time first";
}

} // namespace

std::string_view sort_name(HolderSort sort) {
    switch (sort) {
    case HolderSort::idle:
        return "idle";
    case HolderSort::memory:
        return "memory";
    case HolderSort::sm:
        return "SM";
    case HolderSort::user:
        return "user";
    case HolderSort::standard:
        break;
    }
    return "default";
}

void arrange_holders(NowModel& m, const TopView& view) {
    std::vector<HolderNow>& rows = m.holders;
    const auto by = [&](auto key) {
        std::stable_sort(rows.begin(), rows.end(),
                         [&](const HolderNow& a, const HolderNow& b) { return key(a, b); });
    };
    switch (view.sort) {
    case HolderSort::idle:
        by([](const HolderNow& a, const HolderNow& b) {
            return (a.idle_held ? a.idle_us : -1) > (b.idle_held ? b.idle_us : -1);
        });
        break;
    case HolderSort::memory:
        by([](const HolderNow& a, const HolderNow& b) {
            return a.mem_mib.value_or(-1) > b.mem_mib.value_or(-1);
        });
        break;
    case HolderSort::sm:
        by([](const HolderNow& a, const HolderNow& b) {
            return a.sm_pct.value_or(-1.0) > b.sm_pct.value_or(-1.0);
        });
        break;
    case HolderSort::user:
        by([](const HolderNow& a, const HolderNow& b) { return a.user < b.user; });
        break;
    case HolderSort::standard:
        break;
    }
    m.holders_order = std::string(order_of(view.sort));
    m.holders_filter = view.filter;
    if (view.filter.empty()) {
        return;
    }
    const std::string needle = lower_ascii(view.filter);
    const auto kept = std::stable_partition(rows.begin(), rows.end(), [&](const HolderNow& h) {
        return lower_ascii(h.user).find(needle) != std::string::npos;
    });
    m.holders_hidden += static_cast<std::size_t>(rows.end() - kept);
    rows.erase(kept, rows.end());
}

} // namespace gua::live
