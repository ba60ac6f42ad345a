// SPDX-License-Identifier: Apache-2.0
// sqlite3 handle and statement wrappers.
#include "store/database.hpp"

#include "core/fatal.hpp"
#include "store/db_error.hpp"
#include "store/file_kind.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <array>
#include <filesystem>

namespace gua::store {

std::string sqlite_library_version() {
    return sqlite3_libversion();
}

namespace {

[[noreturn]] void fail(sqlite3* db, std::string_view what) {
    throw DbError(fmt::format("database error: {}: {}", what, db ? sqlite3_errmsg(db) : "?"));
}

void configure(Database& db, OpenMode mode);

void check_bind(sqlite3* db, sqlite3_stmt* st, int rc, int index) {
    if (rc != SQLITE_OK) {
        const char* sql = sqlite3_sql(st);
        fail(db, fmt::format("binding parameter {} of '{}'", index,
                             std::string_view(sql ? sql : "").substr(0, 60)));
    }
}

/// `path` as an SQLite URI ('%', '?' and '#' escaped) with `query` appended.
std::string file_uri(const std::string& path, std::string_view query) {
    std::string uri = path.starts_with('/') ? "file://" : "file:";
    for (const char c : path) {
        if (c == '%' || c == '?' || c == '#') {
            uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
        } else {
            uri += c;
        }
    }
    uri += '?';
    uri += query;
    return uri;
}

} // namespace

ReadOnlyOpen read_only_open(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path + "-wal", ec)) {
        return ReadOnlyOpen{file_uri(path, "immutable=1"), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                            true};
    }
    return ReadOnlyOpen{path, SQLITE_OPEN_READONLY, false};
}

Statement::Statement(sqlite3* db, std::string_view sql) : m_db(db) {
    if (sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                           &m_stmt, nullptr) != SQLITE_OK) {
        fail(db, fmt::format("preparing '{}'", sql.substr(0, 60)));
    }
}

Statement::Statement(Statement&& other) noexcept : m_db(other.m_db), m_stmt(other.m_stmt) {
    other.m_stmt = nullptr;
}

Statement::~Statement() {
    sqlite3_finalize(m_stmt);
}

void Statement::bind(int index, std::int64_t value) {
    check_bind(m_db, m_stmt, sqlite3_bind_int64(m_stmt, index, value), index);
}
void Statement::bind(int index, double value) {
    check_bind(m_db, m_stmt, sqlite3_bind_double(m_stmt, index, value), index);
}
void Statement::bind(int index, std::string_view value) {
    check_bind(m_db, m_stmt,
               sqlite3_bind_text64(m_stmt, index, value.data(), value.size(), SQLITE_TRANSIENT,
                                   SQLITE_UTF8),
               index);
}
void Statement::bind_static(int index, std::string_view value) {
    check_bind(
        m_db, m_stmt,
        sqlite3_bind_text64(m_stmt, index, value.data(), value.size(), SQLITE_STATIC, SQLITE_UTF8),
        index);
}
void Statement::bind_null(int index) {
    check_bind(m_db, m_stmt, sqlite3_bind_null(m_stmt, index), index);
}
void Statement::bind_blob(int index, std::string_view bytes) {
    check_bind(m_db, m_stmt,
               sqlite3_bind_blob64(m_stmt, index, bytes.empty() ? "" : bytes.data(), bytes.size(),
                                   SQLITE_TRANSIENT),
               index);
}

bool Statement::step() {
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW) {
        return true;
    }
    if (rc == SQLITE_DONE) {
        return false;
    }
    const std::string sql = sqlite3_sql(m_stmt) ? sqlite3_sql(m_stmt) : "";
    sqlite3_reset(m_stmt);
    fail(m_db, fmt::format("running '{}'", sql.substr(0, 60)));
}

void Statement::run() {
    step();
    reset();
}

void Statement::reset() {
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
}

bool Statement::is_null(int column) const {
    return sqlite3_column_type(m_stmt, column) == SQLITE_NULL;
}
std::int64_t Statement::int64(int column) const {
    return sqlite3_column_int64(m_stmt, column);
}
double Statement::real(int column) const {
    return sqlite3_column_double(m_stmt, column);
}
std::string Statement::text(int column) const {
    const auto* p = sqlite3_column_text(m_stmt, column);
    return p ? std::string(reinterpret_cast<const char*>(p)) : std::string();
}
std::string_view Statement::blob(int column) const {
    const void* p = sqlite3_column_blob(m_stmt, column);
    const int n = sqlite3_column_bytes(m_stmt, column);
    return p ? std::string_view(static_cast<const char*>(p), static_cast<std::size_t>(n))
             : std::string_view();
}
std::optional<std::int64_t> Statement::opt_int64(int column) const {
    if (is_null(column)) {
        return std::nullopt;
    }
    return int64(column);
}
std::optional<double> Statement::opt_real(int column) const {
    if (is_null(column)) {
        return std::nullopt;
    }
    return real(column);
}

Database::Database(const std::string& path, OpenMode mode) : m_path(path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (mode != OpenMode::create && !fs::exists(path, ec)) {
        throw Fatal(fmt::format("database {} does not exist (is the daemon recording? see `gua "
                                "status`, or pass --db PATH)",
                                path),
                    ExitCode::failure);
    }
    if (mode == OpenMode::create) {
        const fs::path parent = fs::path(path).parent_path();
        if (!parent.empty()) {
            fs::create_directories(parent, ec);
        }
    }
    std::string name = path;
    int flags = SQLITE_OPEN_READWRITE;
    if (mode == OpenMode::read_only) {
        const ReadOnlyOpen how = read_only_open(path);
        name = how.name;
        flags = how.flags;
        m_immutable = how.immutable;
    } else if (mode == OpenMode::create) {
        flags |= SQLITE_OPEN_CREATE;
    }
    if (sqlite3_open_v2(name.c_str(), &m_db, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
        const std::string msg = m_db ? sqlite3_errmsg(m_db) : "out of memory";
        sqlite3_close(m_db);
        m_db = nullptr;
        throw Fatal(fmt::format("cannot open database {}: {}", path, msg));
    }
    try {
        configure(*this, mode);
    } catch (...) {
        sqlite3_close(m_db); // the destructor does not run for a throwing constructor
        m_db = nullptr;
        throw;
    }
}

namespace {

/// Settings of a freshly opened connection; throws Fatal for a foreign file before any write.
void configure(Database& db, OpenMode mode) {
    sqlite3_busy_timeout(db.handle(), 5000);
    sqlite3_extended_result_codes(db.handle(), 1);
    if (mode == OpenMode::read_only) {
        return;
    }
    if (sqlite3_db_readonly(db.handle(), "main") == 1) { // SQLite fell back to reading only
        throw Fatal(fmt::format("database {} is read-only (the file or its file system cannot be "
                                "written by this user)",
                                db.path()));
    }
    // Identify the file before changing anything in it: a foreign SQLite file keeps its
    // journal mode and header.
    const std::int64_t app = db.scalar("PRAGMA application_id");
    const bool empty = db.scalar("SELECT count(*) FROM sqlite_schema") == 0;
    if (app != k_application_id && (app != 0 || !empty)) {
        throw Fatal(not_gua_message(db.path(), app));
    }
    if (mode == OpenMode::create && empty) {
        // Only takes effect before the first table (and before the switch to WAL writes page 1):
        // retention can then return freed pages to the file system in small steps.
        db.exec("PRAGMA auto_vacuum = INCREMENTAL");
    }
    Statement journal(db.handle(), "PRAGMA journal_mode=WAL");
    const std::string got = journal.step() ? journal.text(0) : std::string();
    if (got != "wal" && got != "memory") { // "memory": an in-memory database (tests)
        throw Fatal(fmt::format("cannot switch {} to WAL mode (journal mode stays '{}'); gua needs "
                                "a local file system that supports shared memory",
                                db.path(), got));
    }
    db.exec("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;");
}

} // namespace

Database::~Database() {
    for (sqlite3_stmt* st : m_cached) {
        sqlite3_finalize(st);
    }
    sqlite3_close(m_db);
}

void Database::run_cached(Cached which) {
    static constexpr std::array<const char*, 2> k_sql{"BEGIN IMMEDIATE", "COMMIT"};
    const auto i = static_cast<std::size_t>(which);
    if (m_cached[i] == nullptr && sqlite3_prepare_v3(m_db, k_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
                                                     &m_cached[i], nullptr) != SQLITE_OK) {
        fail(m_db, k_sql[i]);
    }
    const int rc = sqlite3_step(m_cached[i]);
    sqlite3_reset(m_cached[i]);
    if (rc != SQLITE_DONE) {
        fail(m_db, fmt::format("running '{}' on {}", k_sql[i], m_path));
    }
}

void Database::exec(std::string_view sql) {
    char* err = nullptr;
    const std::string owned(sql);
    if (sqlite3_exec(m_db, owned.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
        const std::string msg = err ? err : "unknown error";
        sqlite3_free(err);
        throw DbError(fmt::format("database error in {}: {}", m_path, msg));
    }
}

void Database::exec_noexcept(const char* sql) noexcept {
    sqlite3_exec(m_db, sql, nullptr, nullptr, nullptr);
}

bool Database::in_transaction() const {
    return sqlite3_get_autocommit(m_db) == 0;
}

Statement Database::prepare(std::string_view sql) {
    return Statement(m_db, sql);
}

std::int64_t Database::scalar(std::string_view sql) {
    Statement st(m_db, sql);
    return st.step() ? st.int64(0) : 0;
}

Transaction::Transaction(Database& db) : m_db(db) {
    m_db.run_cached(Database::Cached::begin_immediate);
}

Transaction::~Transaction() {
    if (!m_done) {
        sqlite3_exec(m_db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    }
}

void Transaction::commit() {
    m_db.run_cached(Database::Cached::commit);
    m_done = true;
}

ReadTransaction::ReadTransaction(Database& db) : m_db(db), m_own(!db.in_transaction()) {
    if (m_own) {
        m_db.exec("BEGIN");
    }
}

ReadTransaction::~ReadTransaction() {
    if (m_own) {
        m_db.exec_noexcept("COMMIT"); // nothing was written: a failed COMMIT loses nothing
    }
}

} // namespace gua::store
