// SPDX-License-Identifier: Apache-2.0
// `gua free`'s three output formats: indices, a CUDA_VISIBLE_DEVICES value, and JSON.
#include "core/time.hpp"
#include "live/free.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gua::live {

namespace {

using nlohmann::json;

double seconds_of(DurationUs us) {
    return static_cast<double>(us) / static_cast<double>(k_us_per_second);
}

template <typename T> json opt_json(const std::optional<T>& v) {
    return v ? json(*v) : json();
}

json card_json(const FreeCard& g) {
    return {{"index", g.index},
            {"uuid", g.uuid},
            {"name", g.name},
            {"free", g.free},
            {"reason", g.free ? json() : json(g.reason)},
            {"detail", g.free ? json() : json(g.detail)},
            {"truly_idle_seconds", seconds_of(g.truly_idle_us)},
            {"memory_free_mib", opt_json(g.memory_free_mib)},
            {"memory_total_mib", opt_json(g.memory_total_mib)}};
}

} // namespace

std::string render_free_text(const FreeModel& m) {
    const std::vector<int> free = m.free_indices();
    return free.empty() ? std::string() : fmt::format("{}\n", fmt::join(free, ","));
}

std::string render_free_cuda(const FreeModel& m) {
    std::vector<int> free = m.free_indices();
    if (free.size() < m.ask.count) {
        return {};
    }
    free.resize(m.ask.count);
    return fmt::format("CUDA_VISIBLE_DEVICES={}\n", fmt::join(free, ","));
}

std::string render_free_json(const FreeModel& m) {
    json j;
    j["schema_version"] = m.schema_version;
    j["source"] = {{"kind", m.source},
                   {"db", m.db_path.empty() ? json() : json(m.db_path)},
                   {"note", m.note.empty() ? json() : json(m.note)}};
    j["as_of"] = m.last_tick_end ? json(format_iso8601(*m.last_tick_end)) : json();
    j["for_seconds"] = seconds_of(m.ask.for_us);
    j["min_memory_mib"] = opt_json(m.ask.min_memory_mib);
    j["count"] = m.ask.count;
    j["enough"] = m.enough();
    j["free"] = m.free_indices();
    j["gpus"] = json::array();
    for (const FreeCard& g : m.gpus) {
        j["gpus"].push_back(card_json(g));
    }
    return j.dump(2) + "\n";
}

} // namespace gua::live
