// SPDX-License-Identifier: Apache-2.0
// §9's interconnect and bus figures of one card in JSON and text: rates per hour of the card time
// that read them, the share of active time below the PCIe maximum, and when links were down.
#include "report/fabric_render.hpp"

#include "core/time.hpp"

#include <fmt/format.h>

namespace gua::report {

namespace {

using nlohmann::json;

json iso_or_null(TimeUs t) {
    return t == 0 ? json() : json(format_iso8601(t));
}

json nvlink_json(const audit::FabricTotals& t) {
    json errors = json::object();
    for (std::size_t k = 0; k < audit::k_nvlink_error_count; ++k) {
        const auto rate = t.nvlink_rate(static_cast<audit::NvlinkError>(k));
        errors[audit::k_nvlink_error_names[k]] =
            rate ? json{{"count", t.nvlink_errors[k]},
                        {"per_hour", *rate},
                        {"known_gpu_hours", to_hours(t.nvlink_known_us[k])}}
                 : json();
    }
    json j{{"errors", errors},
           {"errors_from", iso_or_null(t.nvlink_errors_seen.first_us)},
           {"errors_to", iso_or_null(t.nvlink_errors_seen.last_end_us)},
           {"links", t.links_known_us > 0 ? json(t.links) : json()}};
    j["links_known_gpu_hours"] = to_hours(t.links_known_us);
    j["links_down_gpu_hours"] = t.links_known_us > 0 ? json(to_hours(t.links_down_us)) : json();
    j["links_active_min"] = t.links_down_us > 0 ? json(t.links_active_min) : json();
    j["links_down_from"] = iso_or_null(t.links_down_seen.first_us);
    j["links_down_to"] = iso_or_null(t.links_down_seen.last_end_us);
    return j;
}

json pcie_json(const audit::FabricTotals& t) {
    const bool link = t.pcie_gen_max > 0;
    const bool active = t.pcie_known_active_us > 0;
    const bool degraded = t.pcie_degraded_active_us > 0;
    const auto replays = t.pcie_replay_rate();
    return json{
        {"gen_max", link ? json(t.pcie_gen_max) : json()},
        {"width_max", link ? json(t.pcie_width_max) : json()},
        {"known_active_gpu_hours", to_hours(t.pcie_known_active_us)},
        {"degraded_active_share", active ? json(static_cast<double>(t.pcie_degraded_active_us) /
                                                static_cast<double>(t.pcie_known_active_us))
                                         : json()},
        {"lowest_gen", degraded ? json(t.pcie_gen_low) : json()},
        {"lowest_width", degraded ? json(t.pcie_width_low) : json()},
        {"degraded_from", iso_or_null(t.pcie_degraded_seen.first_us)},
        {"degraded_to", iso_or_null(t.pcie_degraded_seen.last_end_us)},
        {"replays", replays ? json(t.pcie_replays) : json()},
        {"replays_per_hour", replays ? json(*replays) : json()}};
}

std::string rate_text(std::optional<double> rate) {
    return rate ? fmt::format("{:.0f}/h", *rate) : std::string("n/a");
}

} // namespace

bool fabric_read(const audit::FabricTotals& t) {
    for (DurationUs us : t.nvlink_known_us) {
        if (us > 0) {
            return true;
        }
    }
    return t.links_known_us > 0 || t.pcie_gen_max > 0 || t.pcie_replay_known_us > 0 ||
           t.remap_known_us > 0;
}

json fabric_json(const audit::FabricTotals& t) {
    const bool nvlink = t.links_known_us > 0 || t.nvlink_known_us[0] > 0 ||
                        t.nvlink_known_us[1] > 0 || t.nvlink_known_us[2] > 0;
    const bool pcie = t.pcie_gen_max > 0 || t.pcie_replay_known_us > 0;
    return json{{"nvlink", nvlink ? nvlink_json(t) : json()},
                {"pcie", pcie ? pcie_json(t) : json()},
                {"row_remap_failed_gpu_hours",
                 t.remap_known_us > 0 ? json(to_hours(t.remap_failed_us)) : json()}};
}

std::string fabric_text_line(int gpu, const audit::FabricTotals& t) {
    using audit::NvlinkError;
    const std::string links = t.links_known_us > 0 ? fmt::format("{} links, down {:.3f} h", t.links,
                                                                 to_hours(t.links_down_us))
                                                   : std::string("links n/a");
    const std::string pcie =
        t.pcie_known_active_us > 0
            ? fmt::format("max gen{} x{}, below it {:.1f}% of active time", t.pcie_gen_max,
                          t.pcie_width_max,
                          100.0 * static_cast<double>(t.pcie_degraded_active_us) /
                              static_cast<double>(t.pcie_known_active_us))
            : std::string("link n/a");
    const std::string remap = t.remap_known_us <= 0   ? std::string("n/a")
                              : t.remap_failed_us > 0 ? std::string("failed")
                                                      : std::string("ok");
    return fmt::format("    GPU {}  NVLink errors replay {}, recovery {}, crc {}; {}; PCIe {}, "
                       "replays {}; row remapper {}\n",
                       gpu, rate_text(t.nvlink_rate(NvlinkError::replay)),
                       rate_text(t.nvlink_rate(NvlinkError::recovery)),
                       rate_text(t.nvlink_rate(NvlinkError::crc)), links, pcie,
                       rate_text(t.pcie_replay_rate()), remap);
}

} // namespace gua::report
