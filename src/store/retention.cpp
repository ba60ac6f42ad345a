// SPDX-License-Identifier: Apache-2.0
// Retention steps: batched DELETEs, incremental_vacuum stepped to completion, TRUNCATE checkpoints.
#include "store/retention.hpp"

#include "store/block.hpp"
#include "store/job_summary.hpp"
#include "store/raw.hpp"
#include "store/rollup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <vector>

namespace gua::store {

namespace {

constexpr DurationUs k_idle_recheck_us = k_us_per_minute;
constexpr DurationUs k_checkpoint_every_us = k_us_per_hour;

} // namespace

bool truncate_wal(Database& db) {
    Statement st = db.prepare("PRAGMA wal_checkpoint(TRUNCATE)");
    return st.step() && st.int64(0) == 0;
}

std::int64_t wal_bytes(const Database& db) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(db.path() + "-wal", ec);
    return ec ? 0 : static_cast<std::int64_t>(size);
}

Retention::Retention(Database& db, RetentionPolicy policy, audit::Thresholds thresholds)
    : m_db(db), m_policy(policy), m_thresholds(thresholds),
      m_incremental(db.scalar("PRAGMA auto_vacuum") == 2) {
    m_db.exec("PRAGMA journal_size_limit = 67108864");
}

std::int64_t Retention::delete_raw(TimeUs now) {
    if (!m_policy.raw_us) {
        return 0;
    }
    const TimeUs cutoff = hour_of(now - *m_policy.raw_us) * k_us_per_hour;
    const TimeUs rollup_cutoff =
        m_policy.rollup_us ? hour_of(now - *m_policy.rollup_us) * k_us_per_hour : k_time_min;
    Transaction tx(m_db);
    Statement pick = m_db.prepare(
        "SELECT id, t0_us, end_us FROM tick_block WHERE id > 0 AND t0_us < ?1 AND (t0_us < ?2 OR "
        "(CASE WHEN t0_us >= 0 THEN t0_us / 3600000000 ELSE -((-t0_us - 1) / 3600000000) - 1 "
        "END) IN (SELECT hour FROM rollup_hour)) ORDER BY t0_us LIMIT ?3");
    pick.bind(1, std::int64_t{cutoff});
    pick.bind(2, std::int64_t{rollup_cutoff});
    pick.bind(3, std::int64_t{k_batch_blocks});
    std::vector<std::int64_t> ids;
    TimeUs from = k_time_max;
    TimeUs to = k_time_min;
    while (pick.step()) {
        ids.push_back(pick.int64(0));
        from = std::min(from, pick.int64(1));
        to = std::max(to, pick.int64(2));
    }
    pick.reset();
    if (ids.empty()) {
        return 0;
    }
    // The jobs these card-ticks belong to keep their figures (gua job, --group-by job).
    summarize_allocations(m_db, from, to, m_thresholds);
    Statement del = m_db.prepare("DELETE FROM tick_block WHERE id = ?");
    for (const std::int64_t id : ids) {
        del.bind(1, id);
        del.run();
    }
    tx.commit();
    return static_cast<std::int64_t>(ids.size());
}

std::int64_t Retention::delete_rollups(TimeUs now) {
    if (!m_policy.rollup_us) {
        return 0;
    }
    const std::int64_t cutoff = hour_of(now - *m_policy.rollup_us);
    Transaction tx(m_db);
    Statement hours =
        m_db.prepare("SELECT hour FROM rollup_hour WHERE hour < ?1 ORDER BY hour LIMIT ?2");
    hours.bind(1, std::int64_t{cutoff});
    hours.bind(2, std::int64_t{k_batch_hours});
    std::int64_t count = 0;
    std::int64_t last = 0;
    while (hours.step()) {
        last = hours.int64(0);
        ++count;
    }
    hours.reset();
    if (count > 0) {
        for (const char* table : {"rollup_hour", "rollup_gpu", "rollup_identity"}) {
            Statement del = m_db.prepare(fmt::format("DELETE FROM {} WHERE hour <= ?", table));
            del.bind(1, std::int64_t{last});
            del.run();
        }
        // A daily rollup whose hours are (partly) gone is gone too.
        for (const char* table : {"rollup_day", "rollup_day_gpu", "rollup_day_identity"}) {
            Statement del = m_db.prepare(fmt::format("DELETE FROM {} WHERE day <= ?", table));
            del.bind(1, std::int64_t{day_of_hour(last)});
            del.run();
        }
    }
    tx.commit();
    return count;
}

std::int64_t Retention::vacuum_pages() {
    if (!m_incremental) {
        return 0;
    }
    const std::int64_t before = m_db.scalar("PRAGMA freelist_count");
    if (before == 0) {
        return 0;
    }
    m_db.exec(fmt::format("PRAGMA incremental_vacuum({})", k_vacuum_pages));
    return before - m_db.scalar("PRAGMA freelist_count");
}

bool Retention::checkpoint(TimeUs now) {
    const bool due = !m_last_checkpoint || now - *m_last_checkpoint >= k_checkpoint_every_us;
    if (!due && wal_bytes(m_db) < k_wal_limit_bytes) {
        return false;
    }
    m_last_checkpoint = now;
    return truncate_wal(m_db);
}

RetentionStep Retention::step(TimeUs now) {
    RetentionStep s;
    if (m_last_idle_check && now - *m_last_idle_check < k_idle_recheck_us &&
        now >= *m_last_idle_check && wal_bytes(m_db) < k_wal_limit_bytes) {
        return s;
    }
    s.blocks_deleted = delete_raw(now);
    if (s.blocks_deleted < k_batch_blocks) {
        s.rollup_hours_deleted = delete_rollups(now);
    }
    s.pages_freed = vacuum_pages();
    s.checkpointed = checkpoint(now);
    s.more = s.blocks_deleted == k_batch_blocks || s.rollup_hours_deleted == k_batch_hours ||
             (m_incremental && m_db.scalar("PRAGMA freelist_count") > 0);
    if (s.more) {
        m_last_idle_check.reset();
    } else {
        m_last_idle_check = now;
    }
    return s;
}

RetentionStep Retention::run_to_completion(TimeUs now) {
    RetentionStep total;
    do {
        m_last_idle_check.reset();
        const RetentionStep s = step(now);
        total.blocks_deleted += s.blocks_deleted;
        total.rollup_hours_deleted += s.rollup_hours_deleted;
        total.pages_freed += s.pages_freed;
        total.checkpointed = total.checkpointed || s.checkpointed;
        total.more = s.more;
        if (s.more && s.blocks_deleted == 0 && s.rollup_hours_deleted == 0 && s.pages_freed == 0) {
            break;
        }
    } while (total.more);
    return total;
}

} // namespace gua::store
