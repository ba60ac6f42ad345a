// SPDX-License-Identifier: Apache-2.0
// Thin RAII wrappers over sqlite3 handles and statements; every failure becomes gua::Fatal.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace gua::store {

/// The version of the SQLite library gua runs with (sqlite3_libversion), e.g. "3.40.1".
std::string sqlite_library_version();

/// An optional integer column as the narrower integer type T; nullopt stays nullopt.
template <typename T> std::optional<T> narrow_int(const std::optional<std::int64_t>& v) {
    return v ? std::optional<T>(static_cast<T>(*v)) : std::nullopt;
}

/// An optional integer of type T as the 64-bit integer SQLite binds; nullopt stays nullopt.
template <typename T> std::optional<std::int64_t> widen_int(const std::optional<T>& v) {
    return v ? std::optional<std::int64_t>(static_cast<std::int64_t>(*v)) : std::nullopt;
}

/// How to open a database file.
enum class OpenMode {
    read_only,  ///< the file must exist; never written
    read_write, ///< the file must exist
    create,     ///< created (with parent directories) when missing
};

/// How a read-only connection to `path` is opened (read_only_open()).
struct ReadOnlyOpen {
    std::string name; ///< the path, or a file: URI
    int flags = 0;    ///< sqlite3_open_v2 flags
    bool immutable = false;
};

/// How to read `path` without writing anything. While a daemon records, its `-wal`/`-shm` exist
/// and are read as usual (SQLite's read-only mode). Without a `-wal` file no connection has the
/// file open in WAL mode (a clean stop removes it), and SQLite would have to create `-wal`/`-shm`
/// to read it — impossible for another user of the service's 0755 directory, and files left
/// behind for everyone else — so the file is opened `immutable=1`: no locks, no side files.
ReadOnlyOpen read_only_open(const std::string& path);

/// A prepared statement. Bind indexes are 1-based; column indexes 0-based.
class Statement {
  public:
    Statement(sqlite3* db, std::string_view sql);
    ~Statement();
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&&) = delete;

    void bind(int index, std::int64_t value);
    void bind(int index, double value);
    void bind(int index, std::string_view value);
    /// Binds text without copying it: `value` must stay valid and unchanged until the statement
    /// is reset (run() resets it).
    void bind_static(int index, std::string_view value);
    void bind_null(int index);
    /// Binds bytes as a BLOB (an empty one binds an empty BLOB, not NULL).
    void bind_blob(int index, std::string_view bytes);
    template <typename T> void bind(int index, const std::optional<T>& value) {
        if (value) {
            bind(index, *value);
        } else {
            bind_null(index);
        }
    }
    /// Advances; true while a row is available. Throws Fatal on errors.
    bool step();
    /// Steps a statement that returns no rows, then resets it for reuse.
    void run();
    /// Resets for re-execution and clears bindings.
    void reset();

    bool is_null(int column) const;
    std::int64_t int64(int column) const;
    double real(int column) const;
    std::string text(int column) const;
    /// The column's bytes (a BLOB or TEXT; empty for NULL), valid until the next step or reset.
    std::string_view blob(int column) const;
    std::optional<std::int64_t> opt_int64(int column) const;
    std::optional<double> opt_real(int column) const;

  private:
    sqlite3* m_db;
    sqlite3_stmt* m_stmt = nullptr;
};

/// An open SQLite connection configured for gua (WAL, synchronous=NORMAL, busy timeout).
class Database {
  public:
    /// Opens `path`. A missing file with mode read_only/read_write is a Fatal naming the path.
    /// In the writable modes, an SQLite file of another application is a Fatal ("not a gua
    /// database") before anything in it changes; otherwise the file is switched to WAL (a Fatal
    /// when SQLite refuses). read_only opens as read_only_open() says.
    Database(const std::string& path, OpenMode mode);
    ~Database();
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    /// Runs one or more statements without results.
    void exec(std::string_view sql);
    /// Runs `sql` ignoring errors (for cleanup paths that must not throw).
    void exec_noexcept(const char* sql) noexcept;
    /// True while a transaction is open on this connection.
    bool in_transaction() const;
    /// Prepares a statement on this connection.
    Statement prepare(std::string_view sql);
    /// Returns the first column of the first row of `sql` as an integer (0 when no row).
    std::int64_t scalar(std::string_view sql);
    const std::string& path() const { return m_path; }
    /// True when opened read-only as an immutable file (see read_only_open()).
    bool immutable() const { return m_immutable; }
    sqlite3* handle() const { return m_db; }

    /// Statements kept prepared for the per-tick path.
    enum class Cached : std::size_t { begin_immediate = 0, commit = 1 };
    /// Runs one of them; throws Fatal on errors.
    void run_cached(Cached which);

  private:
    std::string m_path;
    sqlite3* m_db = nullptr;
    bool m_immutable = false;
    std::array<sqlite3_stmt*, 2> m_cached{};
};

/// Runs BEGIN IMMEDIATE now; COMMIT on commit(), ROLLBACK when destroyed without it.
class Transaction {
  public:
    explicit Transaction(Database& db);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit();

  private:
    Database& m_db;
    bool m_done = false;
};

/// BEGIN … COMMIT of a read transaction (one snapshot for several queries), unless the connection
/// is already in a transaction, whose snapshot is then used.
class ReadTransaction {
  public:
    explicit ReadTransaction(Database& db);
    ~ReadTransaction();
    ReadTransaction(const ReadTransaction&) = delete;
    ReadTransaction& operator=(const ReadTransaction&) = delete;

  private:
    Database& m_db;
    bool m_own;
};

} // namespace gua::store
