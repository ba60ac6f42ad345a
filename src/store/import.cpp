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
#include <optional>
#include <tuple>

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

/// The median of the inferred intervals (k_fallback_interval when there are none): the length
/// of a sample without a recorded or inferred interval of its own GPU.
DurationUs common_interval(const std::map<std::string, DurationUs>& inferred) {
    if (inferred.empty()) {
        return k_fallback_interval;
    }
    std::vector<DurationUs> all;
    for (const auto& [uuid, d] : inferred) {
        all.push_back(d);
    }
    std::nth_element(all.begin(), all.begin() + static_cast<long>(all.size() / 2), all.end());
    return all[all.size() / 2];
}

/// Ticks of one instant, grouped by (run, duration) since a tick has one length.
using InstantTicks = std::map<std::pair<std::int64_t, DurationUs>, telemetry::Tick>;

/// One import of a gpu-usage-audit file: what the file says, the per-GPU cursors merged by time,
/// and the writers (one per gpu-usage-audit run) with their batched transactions.
class ImportRun {
  public:
    ImportRun(const std::string& path, Database& db, const ImportOptions& options);
    ImportSummary run();

  private:
    void open_heads();
    TimeUs next_instant() const;
    InstantTicks gather(TimeUs t);
    void write(InstantTicks& ticks, TimeUs t);
    void end_transaction();
    Writer& writer_for(std::int64_t key, DurationUs interval, TimeUs started);
    std::pair<std::int64_t, DurationUs> duration_of(const PriorSample& s) const;

    Database& m_db;
    const ImportOptions& m_options;
    PriorArtFile m_src;
    ImportSummary m_summary;
    std::string m_hostname;
    std::string m_driver;
    std::map<std::int64_t, PriorRun> m_runs;
    std::map<std::string, PriorDevice> m_devices;
    std::map<std::string, DurationUs> m_inferred;
    std::uint64_t m_total = 0;
    std::map<std::string, telemetry::DeviceInfo> m_known;
    std::map<std::string, std::vector<std::pair<TimeUs, TimeUs>>> m_coverage;
    std::vector<std::string> m_uuids;
    DurationUs m_common = k_fallback_interval;
    std::vector<Head> m_heads;
    std::uint64_t m_read = 0;
    int m_in_transaction = 0;
    std::optional<Transaction> m_tx;
    /// One writer per gpu-usage-audit run (key -1: samples without a recorded run).
    std::map<std::int64_t, std::unique_ptr<Writer>> m_writers;
};

ImportRun::ImportRun(const std::string& path, Database& db, const ImportOptions& options)
    : m_db(db), m_options(options), m_src(path) {
    m_summary.schema_version = m_src.schema().version();
    std::tie(m_hostname, m_driver) = m_src.host();
    m_runs = m_src.runs();
    m_devices = m_src.devices();
    m_inferred = m_src.inferred_intervals();
    m_total = m_src.sample_count();
    m_known = known_devices(db);
    m_coverage = covered(db);
    m_uuids = m_src.gpu_uuids();
    m_summary.gpus = m_uuids.size();
    m_common = common_interval(m_inferred);
}

/// A cursor per GPU at its first sample; GPUs gua does not know yet get a device row.
void ImportRun::open_heads() {
    m_heads.reserve(m_uuids.size());
    for (std::size_t i = 0; i < m_uuids.size(); ++i) {
        const std::string& uuid = m_uuids[i];
        if (!m_known.contains(uuid)) {
            telemetry::DeviceInfo d;
            d.uuid = uuid;
            d.index = static_cast<int>(i);
            d.name = m_devices.contains(uuid) ? m_devices.at(uuid).name : "(imported)";
            if (m_devices.contains(uuid)) {
                d.memory_total_mib = m_devices.at(uuid).memory_total_mb;
            }
            m_known[uuid] = d;
        }
        m_heads.push_back(Head{m_src.cursor(uuid), {}, {}, false});
        m_heads.back().live =
            m_heads.back().cursor.next(m_heads.back().sample, m_heads.back().procs);
    }
}

void ImportRun::end_transaction() {
    if (m_tx) {
        m_tx->commit();
        m_tx.reset();
    }
    m_in_transaction = 0;
}

Writer& ImportRun::writer_for(std::int64_t key, DurationUs interval, TimeUs started) {
    auto& w = m_writers[key];
    if (!w) {
        if (m_tx) {
            end_transaction(); // a Writer records its run in a transaction of its own
        }
        w = std::make_unique<Writer>(m_db, RunInfo{m_hostname.empty() ? "unknown" : m_hostname,
                                                   m_driver, "import:gpu-usage-audit", interval,
                                                   m_options.thresholds.active_util_pct, started,
                                                   m_options.thresholds.held_mib,
                                                   m_options.thresholds.graphics_is_holder});
        w->defer_rollups();
    }
    return *w;
}

std::pair<std::int64_t, DurationUs> ImportRun::duration_of(const PriorSample& s) const {
    if (s.run_id && m_runs.contains(*s.run_id)) {
        return {*s.run_id, m_options.interval.value_or(m_runs.at(*s.run_id).interval_us)};
    }
    const auto it = m_inferred.find(s.uuid);
    return {-1, m_options.interval.value_or(it != m_inferred.end() ? it->second : m_common)};
}

/// The earliest sample time of the live cursors; k_time_max when all are done.
TimeUs ImportRun::next_instant() const {
    TimeUs t = k_time_max;
    for (const Head& h : m_heads) {
        if (h.live) {
            t = std::min(t, h.sample.t0);
        }
    }
    return t;
}

/// The samples at `t` as ticks (those of time gua already has skipped); moves their cursors on.
InstantTicks ImportRun::gather(TimeUs t) {
    InstantTicks ticks;
    for (Head& h : m_heads) {
        if (!h.live || h.sample.t0 != t) {
            continue;
        }
        ++m_read;
        const auto [run, duration] = duration_of(h.sample);
        const auto cov = m_coverage.find(h.sample.uuid);
        if (cov != m_coverage.end() && is_covered(cov->second, t)) {
            ++m_summary.skipped;
        } else {
            telemetry::Tick& tick = ticks[{run, duration}];
            tick.t0 = t;
            tick.duration_us = duration;
            tick.cards.push_back(card_of(h.sample, h.procs, m_known.at(h.sample.uuid), duration,
                                         m_options.thresholds));
            if (run >= 0) {
                ++m_summary.recorded_interval_ticks;
            }
        }
        h.live = h.cursor.next(h.sample, h.procs);
    }
    return ticks;
}

/// Appends the ticks of instant `t` through their run's writer, k_ticks_per_transaction to a
/// transaction.
void ImportRun::write(InstantTicks& ticks, TimeUs t) {
    for (auto& [key, tick] : ticks) {
        std::sort(tick.cards.begin(), tick.cards.end(), [](const auto& a, const auto& b) {
            return a.device.index != b.device.index ? a.device.index < b.device.index
                                                    : a.device.uuid < b.device.uuid;
        });
        const TimeUs started = key.first >= 0 ? m_runs.at(key.first).started_us : t;
        Writer& w = writer_for(key.first, key.second, started);
        if (!m_tx) {
            m_tx.emplace(m_db);
        }
        w.append(tick);
        m_summary.card_ticks += tick.cards.size();
        for (const auto& c : tick.cards) {
            m_summary.process_rows += c.processes.size();
        }
        m_summary.first = std::min(m_summary.first.value_or(t), t);
        m_summary.last_end = std::max(m_summary.last_end.value_or(t), t + tick.duration_us);
        if (++m_in_transaction >= k_ticks_per_transaction) {
            end_transaction();
            if (m_options.progress) {
                m_options.progress(m_read, m_total);
            }
        }
    }
}

ImportSummary ImportRun::run() {
    open_heads();
    for (TimeUs t = next_instant(); t != k_time_max; t = next_instant()) {
        InstantTicks ticks = gather(t);
        write(ticks, t);
    }
    end_transaction();
    for (auto& [key, w] : m_writers) {
        w->finish(m_summary.last_end.value_or(0));
    }
    const TimeUs now = m_options.now != 0 ? m_options.now : wall_now();
    build_missing_rollups(m_db, now, m_options.thresholds);
    if (m_options.progress) {
        m_options.progress(m_total, m_total);
    }
    return m_summary;
}

} // namespace

ImportSummary import_gpu_usage_audit(const std::string& path, Database& db,
                                     const ImportOptions& options) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
        throw Fatal(fmt::format("{}: no such file", path), ExitCode::usage);
    }
    return ImportRun(path, db, options).run();
}

} // namespace gua::store
