// Rollup computation (one WindowAccumulator per card over the hour's canonical tick order) and
// the rollup tables' read path.
#include "store/rollup.hpp"

#include "core/fatal.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace gua::store {

namespace {

std::optional<std::string> gaps_json(const std::vector<audit::Gap>& gaps) {
    if (gaps.empty()) {
        return std::nullopt;
    }
    nlohmann::json j = nlohmann::json::array();
    for (const audit::Gap& g : gaps) {
        j.push_back({g.from, g.to});
    }
    return j.dump();
}

std::vector<audit::Gap> parse_gaps(const std::string& text) {
    std::vector<audit::Gap> gaps;
    if (text.empty()) {
        return gaps;
    }
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_array()) {
        return gaps;
    }
    for (const nlohmann::json& g : j) {
        if (g.is_array() && g.size() == 2) {
            gaps.push_back(audit::Gap{g[0].get<TimeUs>(), g[1].get<TimeUs>()});
        }
    }
    return gaps;
}

std::pair<int, int> no_cell(TimeUs) {
    return {0, 0};
}

struct CardAcc {
    std::int64_t gpu_id;
    audit::WindowAccumulator acc;
};

} // namespace

RollupBuilder::RollupBuilder(Database& db)
    : m_db(db), m_scanner(db), m_identities(db),
      m_exists(db.prepare("SELECT 1 FROM rollup_hour WHERE hour = ?")),
      m_insert_hour(db.prepare(
          "INSERT INTO rollup_hour (hour, active_util_pct, held_mib, graphics_is_holder, "
          "first_t0_us, first_duration_us, last_end_us, gaps) VALUES (?,?,?,?,?,?,?,?)")),
      m_insert_gpu(db.prepare(
          "INSERT INTO rollup_gpu (hour, gpu_id, ticks, active_us, idle_held_us, truly_idle_us, "
          "unmeasured_us, idle_us, underutilized_us, productive_us, compute_bound_us, "
          "first_t0_us, first_duration_us, last_end_us, gaps) "
          "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")),
      m_insert_identity(
          db.prepare("INSERT INTO rollup_identity (hour, gpu_id, identity_id, ticks, active_us, "
                     "idle_held_us, idle_held_mib_ms) VALUES (?,?,?,?,?,?,?)")),
      m_delete{db.prepare("DELETE FROM rollup_hour WHERE hour = ?"),
               db.prepare("DELETE FROM rollup_gpu WHERE hour = ?"),
               db.prepare("DELETE FROM rollup_identity WHERE hour = ?")} {}

bool RollupBuilder::exists(std::int64_t hour) {
    m_exists.bind(1, std::int64_t{hour});
    const bool found = m_exists.step();
    m_exists.reset();
    return found;
}

void RollupBuilder::drop(std::int64_t hour) {
    for (Statement& st : m_delete) {
        st.bind(1, std::int64_t{hour});
        st.run();
    }
}

bool RollupBuilder::build(std::int64_t hour, const audit::Thresholds& thresholds) {
    std::vector<CardAcc> cards;
    std::vector<std::uint32_t> local_to_identity{0};
    audit::CoverageTracker host;
    audit::CardTick tick;
    m_scanner.scan(hour * k_us_per_hour, (hour + 1) * k_us_per_hour, [&](const DecodedTicks& d) {
        for (const StoredCardTick& t : d.ticks) {
            to_audit(d, t, m_identities, tick);
            tick.gpu = 0;
            for (audit::ProcTick& p : tick.processes) {
                auto it =
                    std::find(local_to_identity.begin() + 1, local_to_identity.end(), p.identity);
                if (it == local_to_identity.end()) {
                    local_to_identity.push_back(p.identity);
                    it = local_to_identity.end() - 1;
                }
                p.identity = static_cast<std::uint32_t>(it - local_to_identity.begin());
            }
            auto card = std::find_if(cards.begin(), cards.end(),
                                     [&](const CardAcc& c) { return c.gpu_id == t.gpu_id; });
            if (card == cards.end()) {
                cards.push_back(
                    CardAcc{t.gpu_id, audit::WindowAccumulator(thresholds, 0, no_cell)});
                card = cards.end() - 1;
            }
            card->acc.add(tick);
            host.add(t.t0, t.duration_us, t.t0 + t.duration_us);
        }
    });
    const std::optional<audit::CoverageSummary> coverage = host.summary();
    if (!coverage) {
        return false;
    }
    drop(hour);
    Statement& h = m_insert_hour;
    h.bind(1, std::int64_t{hour});
    h.bind(2, thresholds.active_util_pct);
    h.bind(3, std::int64_t{thresholds.held_mib});
    h.bind(4, std::int64_t{thresholds.graphics_is_holder ? 1 : 0});
    h.bind(5, std::int64_t{coverage->first_t0});
    h.bind(6, std::int64_t{coverage->first_duration_us});
    h.bind(7, std::int64_t{coverage->last_end});
    h.bind(8, gaps_json(coverage->gaps));
    h.run();
    std::sort(cards.begin(), cards.end(),
              [](const CardAcc& a, const CardAcc& b) { return a.gpu_id < b.gpu_id; });
    Statement& g = m_insert_gpu;
    Statement& i = m_insert_identity;
    for (const CardAcc& card : cards) {
        const audit::GpuTotals& t = card.acc.gpus().at(0);
        const audit::CoverageSummary c = *card.acc.coverage();
        const std::array<std::int64_t, 11> values{static_cast<std::int64_t>(t.ticks),
                                                  t.states.active,
                                                  t.states.idle_held,
                                                  t.states.truly_idle,
                                                  t.states.unmeasured,
                                                  t.bucket_us[0],
                                                  t.bucket_us[1],
                                                  t.bucket_us[2],
                                                  t.bucket_us[3],
                                                  c.first_t0,
                                                  c.first_duration_us};
        g.bind(1, std::int64_t{hour});
        g.bind(2, std::int64_t{card.gpu_id});
        for (std::size_t k = 0; k < values.size(); ++k) {
            g.bind(3 + static_cast<int>(k), values[k]);
        }
        g.bind(14, std::int64_t{c.last_end});
        g.bind(15, gaps_json(c.gaps));
        g.run();
        const std::vector<audit::IdentityTotals>& ids = card.acc.identities();
        std::map<std::uint32_t, const audit::IdentityTotals*> ordered;
        for (std::size_t local = 0; local < ids.size(); ++local) {
            if (ids[local].ticks > 0) {
                ordered[local_to_identity[local]] = &ids[local];
            }
        }
        for (const auto& [identity, totals] : ordered) {
            i.bind(1, std::int64_t{hour});
            i.bind(2, std::int64_t{card.gpu_id});
            i.bind(3, std::int64_t{identity});
            i.bind(4, static_cast<std::int64_t>(totals->ticks));
            i.bind(5, std::int64_t{totals->active_us});
            i.bind(6, std::int64_t{totals->idle_held_us});
            i.bind(7, std::int64_t{totals->idle_held_mib_ms});
            i.run();
        }
    }
    return true;
}

std::vector<std::int64_t> RollupBuilder::hours_without_rollup() {
    std::vector<std::int64_t> hours;
    Statement st =
        m_db.prepare("SELECT DISTINCT h FROM (SELECT CASE WHEN t0_us >= 0 THEN t0_us / 3600000000 "
                     "ELSE -((-t0_us - 1) / 3600000000) - 1 END AS h FROM tick_block) "
                     "WHERE h NOT IN (SELECT hour FROM rollup_hour) ORDER BY h");
    while (st.step()) {
        hours.push_back(st.int64(0));
    }
    return hours;
}

std::size_t build_missing_rollups(Database& db, TimeUs before,
                                  const audit::Thresholds& thresholds) {
    RollupBuilder builder(db);
    const std::int64_t limit = hour_of(before);
    std::vector<std::int64_t> hours = builder.hours_without_rollup();
    std::erase_if(hours, [&](std::int64_t h) { return h >= limit; });
    for (std::size_t i = 0; i < hours.size(); i += 24) {
        Transaction tx(db);
        for (std::size_t k = i; k < std::min(hours.size(), i + 24); ++k) {
            builder.build(hours[k], thresholds);
        }
        tx.commit();
    }
    return hours.size();
}

RollupReader::RollupReader(Database& db, std::optional<std::int64_t> gpu)
    : m_gpu(gpu),
      m_hours(db.prepare("SELECT hour, active_util_pct, held_mib, graphics_is_holder, "
                         "first_t0_us, first_duration_us, last_end_us, gaps FROM rollup_hour "
                         "WHERE hour >= ? AND hour < ? ORDER BY hour")),
      m_cards(db.prepare(std::string("SELECT hour, gpu_id, ticks, active_us, idle_held_us, "
                                     "truly_idle_us, unmeasured_us, idle_us, underutilized_us, "
                                     "productive_us, compute_bound_us, first_t0_us, "
                                     "first_duration_us, last_end_us, gaps FROM rollup_gpu "
                                     "WHERE hour >= ?1 AND hour < ?2") +
                         (gpu ? " AND gpu_id = ?3" : "") + " ORDER BY hour, gpu_id")),
      m_identities(db.prepare(std::string("SELECT hour, identity_id, ticks, active_us, "
                                          "idle_held_us, idle_held_mib_ms FROM rollup_identity "
                                          "WHERE hour >= ?1 AND hour < ?2") +
                              (gpu ? " AND gpu_id = ?3" : "") +
                              " ORDER BY hour, gpu_id, identity_id")) {}

void RollupReader::read(std::int64_t first_hour, std::int64_t end_hour,
                        std::vector<StoredHour>& out) {
    out.clear();
    m_hours.bind(1, std::int64_t{first_hour});
    m_hours.bind(2, std::int64_t{end_hour});
    while (m_hours.step()) {
        StoredHour h;
        h.hour = m_hours.int64(0);
        h.thresholds.active_util_pct = m_hours.real(1);
        h.thresholds.held_mib = m_hours.int64(2);
        h.thresholds.graphics_is_holder = m_hours.int64(3) != 0;
        h.totals.hour_start = h.hour * k_us_per_hour;
        if (!m_gpu) {
            h.totals.coverage = audit::CoverageSummary{
                m_hours.int64(4), m_hours.int64(5), m_hours.int64(6), parse_gaps(m_hours.text(7))};
        }
        out.push_back(std::move(h));
    }
    m_hours.reset();
    for (Statement* st : {&m_cards, &m_identities}) {
        st->bind(1, std::int64_t{first_hour});
        st->bind(2, std::int64_t{end_hour});
        if (m_gpu) {
            st->bind(3, std::int64_t{*m_gpu});
        }
    }
    std::size_t at = 0;
    const auto find = [&](std::int64_t hour) -> StoredHour* {
        while (at < out.size() && out[at].hour < hour) {
            ++at;
        }
        return at < out.size() && out[at].hour == hour ? &out[at] : nullptr;
    };
    while (m_cards.step()) {
        StoredHour* h = find(m_cards.int64(0));
        if (h == nullptr) {
            continue;
        }
        audit::HourCard c;
        c.gpu = static_cast<std::uint32_t>(m_cards.int64(1));
        c.totals.ticks = static_cast<std::uint64_t>(m_cards.int64(2));
        c.totals.states = audit::StateTimes{m_cards.int64(3), m_cards.int64(4), m_cards.int64(5),
                                            m_cards.int64(6)};
        for (std::size_t b = 0; b < 4; ++b) {
            c.totals.bucket_us[b] = m_cards.int64(7 + static_cast<int>(b));
        }
        if (m_gpu) {
            h->totals.coverage =
                audit::CoverageSummary{m_cards.int64(11), m_cards.int64(12), m_cards.int64(13),
                                       parse_gaps(m_cards.text(14))};
        }
        h->totals.cards.push_back(c);
    }
    m_cards.reset();
    at = 0;
    while (m_identities.step()) {
        StoredHour* h = find(m_identities.int64(0));
        if (h == nullptr) {
            continue;
        }
        audit::HourIdentity i;
        i.identity = static_cast<std::uint32_t>(m_identities.int64(1));
        i.totals = audit::IdentityTotals{m_identities.int64(3), m_identities.int64(4),
                                         m_identities.int64(5),
                                         static_cast<std::uint64_t>(m_identities.int64(2))};
        h->totals.identities.push_back(i);
    }
    m_identities.reset();
}

} // namespace gua::store
