// SPDX-License-Identifier: Apache-2.0
// What the user chose to see in `gua top`: the holders' sort, a user filter and the help overlay,
// and arranging a view's holders accordingly. Pure.
#pragma once

#include "live/model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gua::live {

/// The order of the holder rows.
enum class HolderSort : std::uint8_t {
    standard, ///< idle-held memory × time first, then memory (live::build_now's order)
    idle,     ///< longest idle-held first
    memory,   ///< most memory first
    sm,       ///< highest SM utilization first
    user      ///< by user name
};

/// The state the keys change (live::KeyMachine).
struct TopView {
    HolderSort sort = HolderSort::standard;
    std::string filter;   ///< only users containing it (case-insensitive); empty: everyone
    bool editing = false; ///< the filter prompt is open
    std::string draft;    ///< the filter being typed
    bool help = false;    ///< the key help is shown
    bool tree = false;    ///< holders under their parent processes (t)
    /// The selected holder (↑/↓), by pid and start time; nullopt: none.
    std::optional<std::uint32_t> selected_pid;
    std::optional<std::uint64_t> selected_start;
    /// A signal waiting for its confirmation (y sends it, any other key cancels).
    struct Confirm {
        int sig = 0;
        std::uint32_t pid = 0;
        std::optional<std::uint64_t> start_ticks;
        std::string user;
        std::string command;
    };
    std::optional<Confirm> confirm;
    std::string message;   ///< what the last action did, shown in the footer until the next key
    bool readonly = false; ///< set by the screen for drawing (--readonly): no signal keys shown
};

/// Short name of `sort` for the header: "default", "idle", "memory", "SM", "user".
std::string_view sort_name(HolderSort sort);

/// Sorts `model`'s holders by `view.sort` (ties keep the standard order, which they must come
/// in), drops those whose user does not contain `view.filter` and says so in the model's
/// holders_order, holders_filter and holders_hidden.
void arrange_holders(NowModel& model, const TopView& view);

} // namespace gua::live
