// SPDX-License-Identifier: Apache-2.0
// `gua now --format json` (docs/now-json.md).
#include "core/time.hpp"
#include "live/render.hpp"

#include <nlohmann/json.hpp>

namespace gua::live {

namespace {

using nlohmann::json;

template <typename T> json opt(const std::optional<T>& v) {
    return v ? json(*v) : json();
}

json seconds(DurationUs us) {
    return static_cast<double>(us) / static_cast<double>(k_us_per_second);
}

json slices_json(const std::vector<audit::StateSlice>& slices) {
    json out = json::array();
    for (const audit::StateSlice& s : slices) {
        out.push_back({{"start", format_iso8601(s.start)},
                       {"state", std::string(audit::to_string(s.state))},
                       {"active_seconds", seconds(s.times.active)},
                       {"idle_held_seconds", seconds(s.times.idle_held)},
                       {"truly_idle_seconds", seconds(s.times.truly_idle)},
                       {"unmeasured_seconds", seconds(s.times.unmeasured)},
                       {"no_data_seconds", seconds(s.no_data_us)}});
    }
    return out;
}

json source_json(const NowModel& m) {
    return {{"kind", m.origin == Origin::daemon ? "daemon" : "sampled"},
            {"database", m.db_path.empty() ? json() : json(m.db_path)},
            {"interval_seconds", seconds(m.interval_us)},
            {"last_tick_end", m.last_tick_end ? json(format_iso8601(*m.last_tick_end)) : json()},
            {"note", m.note}};
}

json history_json(const NowModel& m) {
    const std::size_t slices = m.gpus.empty() ? 0 : m.gpus.front().recent_states.size();
    return {
        {"window_seconds", seconds(m.history_us)},
        {"slice_seconds",
         slices > 0 ? json(static_cast<double>(m.history_us) /
                           static_cast<double>(k_us_per_second) / static_cast<double>(slices))
                    : json()},
        {"end", m.last_tick_end && slices > 0 ? json(format_iso8601(*m.last_tick_end)) : json()}};
}

json last_xid_json(const LastXid& x, TimeUs now) {
    json out = {{"code", x.code},
                {"at", format_iso8601(x.at)},
                {"age_seconds", seconds(now - x.at)},
                {"mnemonic", x.mnemonic},
                {"meaning", x.meaning},
                {"whose", x.whose}};
    if (x.pid) {
        out["pid"] = *x.pid;
    }
    if (!x.command.empty()) {
        out["command"] = x.command;
    }
    if (!x.user.empty()) {
        out["user"] = x.user;
    }
    return out;
}

json gpu_json(const GpuNow& g, const NowModel& m) {
    json out = {{"index", g.index},
                {"uuid", g.uuid},
                {"model", g.model},
                {"util_pct", opt(g.util_pct)},
                {"memory_used_mib", opt(g.mem_used_mib)},
                {"memory_total_mib", opt(g.mem_total_mib)},
                {"state", g.state},
                {"recent",
                 {{"window_seconds", seconds(m.recent_window_us)},
                  {"active", g.recent.active},
                  {"idle_held", g.recent.idle_held},
                  {"truly_idle", g.recent.truly_idle}}},
                {"recent_states", slices_json(g.recent_states)}};
    if (g.last_xid) {
        out["last_xid"] = last_xid_json(*g.last_xid, m.now);
    }
    return out;
}

json holder_json(const HolderNow& h) {
    return {
        {"gpu", h.gpu_index},
        {"gpu_uuid", h.gpu_uuid},
        {"pid", h.pid},
        {"start_ticks", opt(h.start_ticks)},
        {"user", h.user},
        {"uid", opt(h.uid)},
        {"command", h.command},
        {"command_line", h.command_line.empty() ? json() : json(h.command_line)},
        {"type", h.type},
        {"container_id", h.container_id},
        {"pod_uid", h.pod_uid},
        {"pod_namespace", h.pod_namespace},
        {"pod_name", h.pod_name},
        {"container_name", h.container_name},
        {"slurm_job", h.slurm_job},
        {"jupyter_kernel", h.jupyter_kernel},
        {"memory_mib", opt(h.mem_mib)},
        {"sm_util_pct", opt(h.sm_pct)},
        {"idle_held", h.idle_held},
        {"idle_held_seconds", seconds(h.idle_us)},
        {"idle_held_since", h.idle_since ? json(format_iso8601(*h.idle_since)) : json()},
        {"memory_trend_mib_per_hour", opt(h.mem_trend_mib_per_hour)},
        {"time_to_full_seconds", h.time_to_full_us ? json(seconds(*h.time_to_full_us)) : json()}};
}

json decision_json(const DecisionNow& d) {
    return {{"time", format_iso8601(d.time_us)},
            {"rule", d.rule},
            {"action", d.action},
            {"dry_run", d.dry_run},
            {"verdict", d.verdict},
            {"outcome", d.outcome},
            {"pid", d.pid},
            {"user", d.user},
            {"command", d.command},
            {"gpu", d.gpu_index},
            {"memory_mib", opt(d.memory_mib)},
            {"idle_held_seconds", seconds(d.idle_us)},
            {"reclaimed_gib_hours", d.reclaimed_gib_hours},
            {"detail", d.detail}};
}

} // namespace

std::string render_now_json(const NowModel& m) {
    json j;
    j["schema_version"] = m.schema_version;
    j["time"] = format_iso8601(m.now);
    j["host"] = m.host;
    j["source"] = source_json(m);
    j["history"] = history_json(m);
    json gpus = json::array();
    for (const GpuNow& g : m.gpus) {
        gpus.push_back(gpu_json(g, m));
    }
    j["gpus"] = gpus;
    json holders = json::array();
    for (const HolderNow& h : m.holders) {
        holders.push_back(holder_json(h));
    }
    j["holders"] = holders;
    json decisions = json::array();
    for (const DecisionNow& d : m.decisions) {
        decisions.push_back(decision_json(d));
    }
    j["policy"] = {{"window_seconds", seconds(m.decisions_window_us)}, {"decisions", decisions}};
    // Names are bytes other people chose: invalid UTF-8 becomes U+FFFD, never an exception.
    return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

} // namespace gua::live
