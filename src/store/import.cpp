// SPDX-License-Identifier: Apache-2.0
// The importer: per-GPU cursors merged by time into ticks, written by one Writer per
// gpu-usage-audit run in batched transactions; rollups are built once at the end.
#include "store/import.hpp"

#include "audit/classify.hpp"
#include "core/fatal.hpp"
#include "store/prior_art.hpp"
#include "store/rollup.hpp"
#include "store/writer.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>

namespace gua::store {

namespace {

constexpr DurationUs k_fallback_interval = 30 * k_us_per_second;
constexpr int k_ticks_per_transaction = 2000;

/// Time gua already has per GPU uuid: [start, end) of the blocks holding that GPU, merged.
std::map<std::string, std::vector<std::pair<TimeUs, TimeUs>>> covered(Database& db) {
    std::map<std::int64_t, std::string> uuids;
    Statement g = db.prepare("SELECT id, uuid FROM gpu");
    while (g.step()) {
        uuids[g.int64(0)] = g.text(1);
    }
    std::map<std::string, std::vector<std::pair<TimeUs, TimeUs>>> out;
    Statement b = db.prepare("SELECT t0_us, end_us, cards FROM tick_block ORDER BY t0_us");
    while (b.step()) {
        const nlohmann::json cards = nlohmann::json::parse(b.text(2), nullptr, false);
        if (!cards.is_array()) {
            continue;
        }
        for (const nlohmann::json& id : cards) {
            if (const auto it = uuids.find(id.get<std::int64_t>()); it != uuids.end()) {
                out[it->second].emplace_back(b.int64(0), b.int64(1));
            }
        }
    }
    for (auto& [uuid, spans] : out) {
        std::sort(spans.begin(), spans.end());
        std::vector<std::pair<TimeUs, TimeUs>> merged;
        for (const auto& s : spans) {
            if (!merged.empty() && s.first <= merged.back().second) {
                merged.back().second = std::max(merged.back().second, s.second);
            } else {
                merged.push_back(s);
            }
        }
        spans = std::move(merged);
    }
    return out;
}

bool is_covered(const std::vector<std::pair<TimeUs, TimeUs>>& spans, TimeUs t) {
    auto it =
        std::upper_bound(spans.begin(), spans.end(), std::pair<TimeUs, TimeUs>{t, k_time_max});
    return it != spans.begin() && t < std::prev(it)->second;
}

/// The devices gua already knows, so that importing never rewrites their names or indexes.
std::map<std::string, telemetry::DeviceInfo> known_devices(Database& db) {
    std::map<std::string, telemetry::DeviceInfo> out;
    Statement st =
        db.prepare("SELECT uuid, idx, name, memory_total_mib, pci_bus_id, parent_uuid FROM gpu");
    while (st.step()) {
        out[st.text(0)] = telemetry::DeviceInfo{st.text(0), static_cast<int>(st.int64(1)),
                                                st.text(2), st.opt_int64(3),
                                                st.text(4), st.text(5)};
    }
    return out;
}

telemetry::CardTickRecord card_of(const PriorSample& s, const std::vector<PriorProcess>& procs,
                                  const telemetry::DeviceInfo& device, DurationUs duration,
                                  const audit::Thresholds& thresholds) {
    telemetry::CardTickRecord c;
    c.device = device;
    c.util_source = telemetry::UtilSource::snapshot;
    c.util_samples = 1;
    const auto util = static_cast<double>(s.util_pct);
    c.util_pct = util;
    c.active_us = util >= thresholds.active_util_pct ? duration : 0;
    c.bucket_us[static_cast<std::size_t>(audit::bucket_of(util))] = duration;
    c.readings.mem_used_mib = s.memory_used_mb;
    c.readings.temperature_c = s.temperature_c;
    if (s.power_w) {
        c.readings.power_mw = *s.power_w * 1000;
    }
    for (const PriorProcess& p : procs) {
        telemetry::ProcessTick pt;
        pt.pid = static_cast<std::uint32_t>(p.pid);
        pt.identity.user = p.user.value_or("unknown");
        pt.identity.command = p.name;
        pt.type = p.graphics ? telemetry::ProcessType::graphics : telemetry::ProcessType::compute;
        pt.mem_used_mib = p.mem_used_mb;
        c.processes.push_back(std::move(pt));
    }
    return c;
}

struct Head {
    PriorArtFile::Cursor cursor;
    PriorSample sample;
    std::vector<PriorProcess> procs;
    bool live = false;
};

} // namespace

ImportSummary import_gpu_usage_audit(const std::string& path, Database& db,
                                     const ImportOptions& options) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
        throw Fatal(fmt::format("{}: no such file", path), ExitCode::usage);
    }
    PriorArtFile src(path);
    ImportSummary summary;
    summary.schema_version = src.schema().version();
    // Named, not a structured binding: clang 14 (the TSan build) cannot capture those.
    const std::pair<std::string, std::string> host = src.host();
    const std::string& hostname = host.first;
    const std::string& driver = host.second;
    const std::map<std::int64_t, PriorRun> runs = src.runs();
    const std::map<std::string, PriorDevice> devices = src.devices();
    const std::map<std::string, DurationUs> inferred = src.inferred_intervals();
    const std::uint64_t total = src.sample_count();
    std::map<std::string, telemetry::DeviceInfo> known = known_devices(db);
    const auto coverage = covered(db);
    const std::vector<std::string> uuids = src.gpu_uuids();
    summary.gpus = uuids.size();

    DurationUs common = k_fallback_interval;
    if (!inferred.empty()) {
        std::vector<DurationUs> all;
        for (const auto& [uuid, d] : inferred) {
            all.push_back(d);
        }
        std::nth_element(all.begin(), all.begin() + static_cast<long>(all.size() / 2), all.end());
        common = all[all.size() / 2];
    }
    std::vector<Head> heads;
    heads.reserve(uuids.size());
    for (std::size_t i = 0; i < uuids.size(); ++i) {
        const std::string& uuid = uuids[i];
        if (!known.contains(uuid)) {
            telemetry::DeviceInfo d;
            d.uuid = uuid;
            d.index = static_cast<int>(i);
            d.name = devices.contains(uuid) ? devices.at(uuid).name : "(imported)";
            if (devices.contains(uuid)) {
                d.memory_total_mib = devices.at(uuid).memory_total_mb;
            }
            known[uuid] = d;
        }
        heads.push_back(Head{src.cursor(uuid), {}, {}, false});
        heads.back().live = heads.back().cursor.next(heads.back().sample, heads.back().procs);
    }

    std::uint64_t read = 0;
    int in_transaction = 0;
    std::optional<Transaction> tx;
    // One writer per gpu-usage-audit run (key -1: samples without a recorded run).
    std::map<std::int64_t, std::unique_ptr<Writer>> writers;
    const auto writer_for = [&](std::int64_t key, DurationUs interval, TimeUs started) -> Writer& {
        auto& w = writers[key];
        if (!w) {
            if (tx) {
                tx->commit(); // a Writer records its run in a transaction of its own
                tx.reset();
                in_transaction = 0;
            }
            w = std::make_unique<Writer>(db, RunInfo{hostname.empty() ? "unknown" : hostname,
                                                     driver, "import:gpu-usage-audit", interval,
                                                     options.thresholds.active_util_pct, started,
                                                     options.thresholds.held_mib,
                                                     options.thresholds.graphics_is_holder});
            w->defer_rollups();
        }
        return *w;
    };
    const auto duration_of = [&](const PriorSample& s) -> std::pair<std::int64_t, DurationUs> {
        if (s.run_id && runs.contains(*s.run_id)) {
            return {*s.run_id, options.interval.value_or(runs.at(*s.run_id).interval_us)};
        }
        const auto it = inferred.find(s.uuid);
        return {-1, options.interval.value_or(it != inferred.end() ? it->second : common)};
    };

    while (true) {
        TimeUs t = k_time_max;
        for (const Head& h : heads) {
            if (h.live) {
                t = std::min(t, h.sample.t0);
            }
        }
        if (t == k_time_max) {
            break;
        }
        // Ticks of this instant, grouped by (run, duration) since a tick has one length.
        std::map<std::pair<std::int64_t, DurationUs>, telemetry::Tick> ticks;
        for (Head& h : heads) {
            if (!h.live || h.sample.t0 != t) {
                continue;
            }
            ++read;
            const auto [run, duration] = duration_of(h.sample);
            const auto cov = coverage.find(h.sample.uuid);
            if (cov != coverage.end() && is_covered(cov->second, t)) {
                ++summary.skipped;
            } else {
                telemetry::Tick& tick = ticks[{run, duration}];
                tick.t0 = t;
                tick.duration_us = duration;
                tick.cards.push_back(card_of(h.sample, h.procs, known.at(h.sample.uuid), duration,
                                             options.thresholds));
                if (run >= 0) {
                    ++summary.recorded_interval_ticks;
                }
            }
            h.live = h.cursor.next(h.sample, h.procs);
        }
        for (auto& [key, tick] : ticks) {
            std::sort(tick.cards.begin(), tick.cards.end(), [](const auto& a, const auto& b) {
                return a.device.index != b.device.index ? a.device.index < b.device.index
                                                        : a.device.uuid < b.device.uuid;
            });
            const TimeUs started = key.first >= 0 ? runs.at(key.first).started_us : t;
            Writer& w = writer_for(key.first, key.second, started);
            if (!tx) {
                tx.emplace(db);
            }
            w.append(tick);
            summary.card_ticks += tick.cards.size();
            for (const auto& c : tick.cards) {
                summary.process_rows += c.processes.size();
            }
            summary.first = std::min(summary.first.value_or(t), t);
            summary.last_end = std::max(summary.last_end.value_or(t), t + tick.duration_us);
            if (++in_transaction >= k_ticks_per_transaction) {
                tx->commit();
                tx.reset();
                in_transaction = 0;
                if (options.progress) {
                    options.progress(read, total);
                }
            }
        }
    }
    if (tx) {
        tx->commit();
        tx.reset();
    }
    for (auto& [key, w] : writers) {
        w->finish(summary.last_end.value_or(0));
    }
    const TimeUs now = options.now != 0 ? options.now : wall_now();
    build_missing_rollups(db, now, options.thresholds);
    if (options.progress) {
        options.progress(total, total);
    }
    return summary;
}

} // namespace gua::store
