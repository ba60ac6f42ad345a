// SPDX-License-Identifier: Apache-2.0
// Rollup computation: one WindowAccumulator per card over the hour's canonical tick order; daily
// rollups are sums of the hourly ones.
#include "core/time.hpp"
#include "core/timezone.hpp"
#include "store/evidence.hpp"
#include "store/rollup.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

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

std::pair<int, int> no_cell(TimeUs) {
    return {0, 0}; // Sunday night: hourly rollups keep their office split as off-hours
}

struct CardAcc {
    std::int64_t gpu_id;
    audit::WindowAccumulator acc;
};

/// The raw card-ticks of one hour accumulated per card, as an hourly rollup holds them.
struct HourScan {
    std::vector<CardAcc> cards; ///< ascending gpu id
    std::vector<std::uint32_t> local_to_identity{0};
    audit::CoverageTracker host;
};

HourScan scan_hour(BlockScanner& scanner, ProcessIdentities& identities, std::int64_t hour,
                   const audit::Thresholds& thresholds) {
    HourScan s;
    audit::CardTick tick;
    scanner.scan(hour * k_us_per_hour, (hour + 1) * k_us_per_hour, [&](const DecodedTicks& d) {
        for (const StoredCardTick& t : d.ticks) {
            to_audit(d, t, identities, tick);
            tick.gpu = 0;
            for (audit::ProcTick& p : tick.processes) {
                // Identity 0 (a process whose row is unknown) shares local 0 with nobody, as
                // on the raw path where both are identity 0.
                auto it =
                    std::find(s.local_to_identity.begin(), s.local_to_identity.end(), p.identity);
                if (it == s.local_to_identity.end()) {
                    s.local_to_identity.push_back(p.identity);
                    it = s.local_to_identity.end() - 1;
                }
                p.identity = static_cast<std::uint32_t>(it - s.local_to_identity.begin());
            }
            auto card = std::find_if(s.cards.begin(), s.cards.end(),
                                     [&](const CardAcc& c) { return c.gpu_id == t.gpu_id; });
            if (card == s.cards.end()) {
                s.cards.push_back(
                    CardAcc{t.gpu_id, audit::WindowAccumulator(thresholds, 0, no_cell)});
                card = s.cards.end() - 1;
            }
            card->acc.add(tick);
            s.host.add(t.t0, t.duration_us, t.t0 + t.duration_us);
        }
    });
    std::sort(s.cards.begin(), s.cards.end(),
              [](const CardAcc& a, const CardAcc& b) { return a.gpu_id < b.gpu_id; });
    return s;
}

constexpr const char* k_hour_of_t0 =
    "CASE WHEN t0_us >= 0 THEN t0_us / 3600000000 ELSE -((-t0_us - 1) / 3600000000) - 1 END";

/// What the rollup_hour row of an hour holds.
struct HourRow {
    std::int64_t hour = 0;
    const audit::Thresholds& thresholds;
    const audit::CoverageSummary& coverage;
    const audit::StateTimes& states; ///< summed over the hour's cards
};

void insert_hour(Statement& h, const HourRow& r) {
    const std::array<std::int64_t, 10> hour_values{r.hour,
                                                   r.thresholds.held_mib,
                                                   r.thresholds.graphics_is_holder ? 1 : 0,
                                                   r.states.active,
                                                   r.states.idle_held,
                                                   r.states.truly_idle,
                                                   r.states.unmeasured,
                                                   r.coverage.first_t0,
                                                   r.coverage.first_duration_us,
                                                   r.coverage.last_end};
    h.bind(1, hour_values[0]);
    h.bind(2, r.thresholds.active_util_pct);
    for (std::size_t k = 1; k < hour_values.size(); ++k) {
        h.bind(2 + static_cast<int>(k), hour_values[k]);
    }
    h.bind(12, gaps_json(r.coverage.gaps));
    h.bind(13, std::int64_t{r.states.allocated_unused});
    h.run();
}

/// Binds a card's ticks, state times (active, idle-held, truly idle, unmeasured) and bucket times
/// (idle, underutilized, productive, compute-bound) to the 9 parameters from `first` on: the
/// columns rollup_gpu and rollup_day_gpu share.
void bind_gpu_times(Statement& st, int first, const audit::GpuTotals& t) {
    const std::array<std::int64_t, 9> values{static_cast<std::int64_t>(t.ticks),
                                             t.states.active,
                                             t.states.idle_held,
                                             t.states.truly_idle,
                                             t.states.unmeasured,
                                             t.bucket_us[0],
                                             t.bucket_us[1],
                                             t.bucket_us[2],
                                             t.bucket_us[3]};
    for (std::size_t k = 0; k < values.size(); ++k) {
        st.bind(first + static_cast<int>(k), values[k]);
    }
}

/// The rollup_gpu row of one card's hour.
void insert_card(Statement& g, std::int64_t hour, const CardAcc& card) {
    const audit::GpuTotals& t = card.acc.gpus().at(0);
    const audit::CoverageSummary c = *card.acc.coverage();
    g.bind(1, std::int64_t{hour});
    g.bind(2, std::int64_t{card.gpu_id});
    bind_gpu_times(g, 3, t);
    g.bind(12, std::int64_t{c.first_t0});
    g.bind(13, std::int64_t{c.first_duration_us});
    g.bind(14, std::int64_t{c.last_end});
    g.bind(15, gaps_json(c.gaps));
    g.bind_blob(16, encode_evidence(t));
    g.bind(17, std::int64_t{t.states.allocated_unused});
    g.run();
}

/// The rollup_identity rows of one card's hour (identities that did nothing on it left out), in
/// identity id order.
void insert_identities(Statement& i, std::int64_t hour, const CardAcc& card,
                       const std::vector<std::uint32_t>& local_to_identity) {
    const std::vector<audit::IdentityTotals>& ids = card.acc.identities();
    std::map<std::uint32_t, const audit::IdentityTotals*> ordered;
    for (std::size_t local = 0; local < ids.size(); ++local) {
        const audit::IdentityTotals& it = ids[local];
        if (it.ticks > 0 || it.active_us != 0 || it.idle_held_us != 0 || it.idle_held_mib_ms != 0) {
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
        i.bind(8, static_cast<std::int64_t>(totals->holder_ticks));
        i.bind_blob(9, encode_identity_evidence(*totals));
        i.run();
    }
}

/// True when a raw tick of the day's hours [first, first + 24) has no hourly rollup yet.
bool hours_pending(Database& db, std::int64_t first) {
    Statement pending = db.prepare(
        fmt::format("SELECT 1 FROM tick_block WHERE t0_us >= ?1 AND t0_us < ?2 AND ({}) NOT IN "
                    "(SELECT hour FROM rollup_hour WHERE hour >= ?3 AND hour < ?4) LIMIT 1",
                    k_hour_of_t0));
    pending.bind(1, std::int64_t{first * k_us_per_hour});
    pending.bind(2, std::int64_t{(first + 24) * k_us_per_hour});
    pending.bind(3, std::int64_t{first});
    pending.bind(4, std::int64_t{first + 24});
    return pending.step();
}

/// The hourly rollups of a day: how many, and the thresholds they share.
struct DayKinds {
    std::int64_t hours = 0;
    double active_util_pct = 0;
    std::int64_t held_mib = 0;
    std::int64_t graphics_is_holder = 0;
};

/// nullopt when the day [first, first + 24) has no hourly rollup, or rollups built with
/// different thresholds.
std::optional<DayKinds> day_kinds(Database& db, std::int64_t first) {
    Statement kinds = db.prepare(
        "SELECT count(*), count(DISTINCT active_util_pct || '/' || held_mib || '/' || "
        "graphics_is_holder), max(active_util_pct), max(held_mib), max(graphics_is_holder) "
        "FROM rollup_hour WHERE hour >= ? AND hour < ?");
    kinds.bind(1, std::int64_t{first});
    kinds.bind(2, std::int64_t{first + 24});
    if (!kinds.step() || kinds.int64(0) == 0 || kinds.int64(1) != 1) {
        return std::nullopt;
    }
    return DayKinds{kinds.int64(0), kinds.real(2), kinds.int64(3), kinds.int64(4)};
}

/// The sums of a day's hourly rollups, per card and per (card, identity).
struct DaySums {
    std::map<std::int64_t, audit::GpuTotals> gpus;
    std::map<std::pair<std::int64_t, std::int64_t>, audit::IdentityTotals> identities;
    std::int64_t off_hours_mask = 0; ///< bit h: the day's hour h is off hours (in UTC)
};

/// Sums in C++: the evidence BLOBs are not summable in SQL, and each hour's office-hours
/// split is fixed here in UTC (the report's default zone; other zones use the hourly rollups).
DaySums sum_day(Database& db, std::int64_t first) {
    RollupReader reader(db, std::nullopt);
    std::vector<StoredRollup> hours;
    reader.hours(first, first + 24, hours);
    DaySums sums;
    const TimeZone utc = TimeZone::load("UTC").value();
    for (const StoredRollup& h : hours) {
        const auto [weekday, hour] = utc.weekday_hour(h.first_hour * k_us_per_hour);
        const bool off = audit::is_off_hours(weekday, hour);
        sums.off_hours_mask |= off ? std::int64_t{1} << (h.first_hour - first) : 0;
        for (const audit::RollupCard& c : h.totals.cards) {
            audit::GpuTotals t = c.totals;
            audit::move_office_split(t, off);
            sums.gpus[c.gpu] += t;
        }
        for (const audit::RollupIdentity& i : h.totals.identities) {
            const std::int64_t gpu = i.totals.by_gpu.empty() ? 0 : i.totals.by_gpu.front().gpu;
            sums.identities[{gpu, i.identity}] += i.totals;
        }
    }
    return sums;
}

void insert_day_gpus(Database& db, std::int64_t day, const DaySums& sums) {
    Statement g = db.prepare(
        "INSERT INTO rollup_day_gpu (day, gpu_id, ticks, active_us, idle_held_us, truly_idle_us, "
        "unmeasured_us, idle_us, underutilized_us, productive_us, compute_bound_us, evidence, "
        "allocated_unused_us) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (const auto& [gpu, t] : sums.gpus) {
        g.bind(1, std::int64_t{day});
        g.bind(2, std::int64_t{gpu});
        bind_gpu_times(g, 3, t);
        g.bind_blob(12, encode_evidence(t));
        g.bind(13, std::int64_t{t.states.allocated_unused});
        g.run();
    }
}

void insert_day_identities(Database& db, std::int64_t day, const DaySums& sums) {
    Statement i =
        db.prepare("INSERT INTO rollup_day_identity (day, gpu_id, identity_id, ticks, active_us, "
                   "idle_held_us, idle_held_mib_ms, holder_ticks, evidence) "
                   "VALUES (?,?,?,?,?,?,?,?,?)");
    for (const auto& [key, t] : sums.identities) {
        const std::array<std::int64_t, 8> values{day,
                                                 key.first,
                                                 key.second,
                                                 static_cast<std::int64_t>(t.ticks),
                                                 t.active_us,
                                                 t.idle_held_us,
                                                 t.idle_held_mib_ms,
                                                 static_cast<std::int64_t>(t.holder_ticks)};
        for (std::size_t k = 0; k < values.size(); ++k) {
            i.bind(1 + static_cast<int>(k), values[k]);
        }
        i.bind_blob(9, encode_identity_evidence(t));
        i.run();
    }
}

} // namespace

RollupBuilder::RollupBuilder(Database& db)
    : m_db(db), m_scanner(db), m_identities(db),
      m_exists(db.prepare("SELECT 1 FROM rollup_hour WHERE hour = ?")),
      m_insert_hour(db.prepare(
          "INSERT INTO rollup_hour (hour, active_util_pct, held_mib, graphics_is_holder, "
          "active_us, idle_held_us, truly_idle_us, unmeasured_us, first_t0_us, "
          "first_duration_us, last_end_us, gaps, allocated_unused_us) "
          "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)")),
      m_insert_gpu(db.prepare(
          "INSERT INTO rollup_gpu (hour, gpu_id, ticks, active_us, idle_held_us, truly_idle_us, "
          "unmeasured_us, idle_us, underutilized_us, productive_us, compute_bound_us, "
          "first_t0_us, first_duration_us, last_end_us, gaps, evidence, allocated_unused_us) "
          "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")),
      m_insert_identity(
          db.prepare("INSERT INTO rollup_identity (hour, gpu_id, identity_id, ticks, active_us, "
                     "idle_held_us, idle_held_mib_ms, holder_ticks, evidence) "
                     "VALUES (?,?,?,?,?,?,?,?,?)")),
      m_delete{db.prepare("DELETE FROM rollup_hour WHERE hour = ?"),
               db.prepare("DELETE FROM rollup_gpu WHERE hour = ?"),
               db.prepare("DELETE FROM rollup_identity WHERE hour = ?")},
      m_delete_day{db.prepare("DELETE FROM rollup_day WHERE day = ?"),
                   db.prepare("DELETE FROM rollup_day_gpu WHERE day = ?"),
                   db.prepare("DELETE FROM rollup_day_identity WHERE day = ?")} {}

bool RollupBuilder::exists(std::int64_t hour) {
    m_exists.bind(1, std::int64_t{hour});
    const bool found = m_exists.step();
    m_exists.reset();
    return found;
}

void RollupBuilder::drop_day(std::int64_t day) {
    for (Statement& st : m_delete_day) {
        st.bind(1, std::int64_t{day});
        st.run();
    }
}

void RollupBuilder::drop(std::int64_t hour) {
    for (Statement& st : m_delete) {
        st.bind(1, std::int64_t{hour});
        st.run();
    }
    drop_day(day_of_hour(hour));
}

bool RollupBuilder::build(std::int64_t hour, const audit::Thresholds& thresholds) {
    const HourScan scan = scan_hour(m_scanner, m_identities, hour, thresholds);
    const std::optional<audit::CoverageSummary> coverage = scan.host.summary();
    if (!coverage) {
        return false;
    }
    drop(hour);
    audit::StateTimes host_states;
    for (const CardAcc& card : scan.cards) {
        host_states += card.acc.states();
    }
    insert_hour(m_insert_hour, HourRow{hour, thresholds, *coverage, host_states});
    for (const CardAcc& card : scan.cards) {
        insert_card(m_insert_gpu, hour, card);
        insert_identities(m_insert_identity, hour, card, scan.local_to_identity);
    }
    return true;
}

std::vector<std::string> RollupBuilder::verify(std::int64_t hour,
                                               const audit::Thresholds& thresholds) {
    const HourScan scan = scan_hour(m_scanner, m_identities, hour, thresholds);
    std::vector<std::string> problems;
    Statement st = m_db.prepare("SELECT gpu_id, ticks, active_us, idle_held_us, truly_idle_us, "
                                "unmeasured_us, evidence, allocated_unused_us FROM rollup_gpu "
                                "WHERE hour = ?");
    st.bind(1, std::int64_t{hour});
    while (st.step()) {
        const std::int64_t gpu = st.int64(0);
        const auto card = std::find_if(scan.cards.begin(), scan.cards.end(),
                                       [&](const CardAcc& c) { return c.gpu_id == gpu; });
        const audit::GpuTotals* t = card == scan.cards.end() ? nullptr : &card->acc.gpus().at(0);
        const auto raw_ticks = t == nullptr ? std::int64_t{0} : static_cast<std::int64_t>(t->ticks);
        const std::string where =
            fmt::format("rollup of {} for gpu id {}", format_iso8601(hour * k_us_per_hour), gpu);
        if (raw_ticks < st.int64(1)) {
            continue; // raw ticks partly deleted by retention: nothing to compare with
        }
        if (raw_ticks > st.int64(1)) {
            problems.push_back(fmt::format("{} counts {} card-ticks, its raw ticks {}", where,
                                           st.int64(1), raw_ticks));
            continue;
        }
        const std::array<std::int64_t, 6> states{t->states.active,
                                                 t->states.idle_held,
                                                 t->states.truly_idle,
                                                 t->states.unmeasured,
                                                 0,
                                                 t->states.allocated_unused};
        std::vector<int> differ = evidence_differences(st.blob(6), *t);
        for (int k = 0; k < 6; ++k) {
            if (k != 4 && st.int64(2 + k) != states[static_cast<std::size_t>(k)]) {
                differ.insert(differ.begin(), -1);
                break;
            }
        }
        if (!differ.empty()) {
            problems.push_back(fmt::format(
                "{} disagrees with its raw ticks ({}); reports over this hour would differ by "
                "the path they take",
                where,
                differ.front() < 0 ? "state times"
                                   : fmt::format("evidence fields {}", fmt::join(differ, ", "))));
        }
    }
    return problems;
}

bool RollupBuilder::build_day(std::int64_t day) {
    const std::int64_t first = day * 24;
    if (hours_pending(m_db, first)) {
        return false;
    }
    const std::optional<DayKinds> kinds = day_kinds(m_db, first);
    if (!kinds) {
        return false;
    }
    const DaySums sums = sum_day(m_db, first);
    drop_day(day);
    Statement d =
        m_db.prepare("INSERT INTO rollup_day (day, hours, off_hours_mask, "
                     "active_util_pct, held_mib, graphics_is_holder) VALUES (?,?,?,?,?,?)");
    d.bind(1, std::int64_t{day});
    d.bind(2, kinds->hours);
    d.bind(3, sums.off_hours_mask);
    d.bind(4, kinds->active_util_pct);
    d.bind(5, kinds->held_mib);
    d.bind(6, kinds->graphics_is_holder);
    d.run();
    insert_day_gpus(m_db, day, sums);
    insert_day_identities(m_db, day, sums);
    return true;
}

std::vector<std::int64_t> RollupBuilder::hours_without_rollup() {
    std::vector<std::int64_t> hours;
    Statement st = m_db.prepare(fmt::format("SELECT DISTINCT h FROM (SELECT {} AS h FROM "
                                            "tick_block) WHERE h NOT IN (SELECT hour FROM "
                                            "rollup_hour) ORDER BY h",
                                            k_hour_of_t0));
    while (st.step()) {
        hours.push_back(st.int64(0));
    }
    return hours;
}

std::vector<std::int64_t> RollupBuilder::days_without_rollup() {
    std::vector<std::int64_t> days;
    Statement st = m_db.prepare(
        "SELECT DISTINCT d FROM (SELECT CASE WHEN hour >= 0 THEN hour / 24 ELSE "
        "-((-hour - 1) / 24) - 1 END AS d FROM rollup_hour) WHERE d NOT IN (SELECT day FROM "
        "rollup_day) ORDER BY d");
    while (st.step()) {
        days.push_back(st.int64(0));
    }
    return days;
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
    Transaction tx(db);
    for (std::int64_t day : builder.days_without_rollup()) {
        if ((day + 1) * 24 <= limit) {
            builder.build_day(day);
        }
    }
    tx.commit();
    return hours.size();
}

} // namespace gua::store
