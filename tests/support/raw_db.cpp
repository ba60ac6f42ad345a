// SPDX-License-Identifier: Apache-2.0
// Plain sqlite3 access for tests of the schema's public interface.
#include "support/raw_db.hpp"

#include <sqlite3.h>

#include <stdexcept>

namespace gua::test {

RawDb::RawDb(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &m_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
        SQLITE_OK) {
        sqlite3_close(m_db);
        throw std::runtime_error("cannot open " + path);
    }
}

RawDb::~RawDb() {
    sqlite3_close(m_db);
}

void RawDb::exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
        const std::string msg = err != nullptr ? err : "?";
        sqlite3_free(err);
        throw std::runtime_error(sql + ": " + msg);
    }
}

std::vector<std::map<std::string, std::string>> RawDb::rows(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(m_db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
        throw std::runtime_error(sql + ": " + sqlite3_errmsg(m_db));
    }
    std::vector<std::map<std::string, std::string>> out;
    while (sqlite3_step(st) == SQLITE_ROW) {
        std::map<std::string, std::string> row;
        for (int c = 0; c < sqlite3_column_count(st); ++c) {
            const unsigned char* text = sqlite3_column_text(st, c);
            row[sqlite3_column_name(st, c)] =
                text != nullptr ? reinterpret_cast<const char*>(text) : "NULL";
        }
        out.push_back(std::move(row));
    }
    sqlite3_finalize(st);
    return out;
}

std::string RawDb::one(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(m_db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
        throw std::runtime_error(sql + ": " + sqlite3_errmsg(m_db));
    }
    std::string out;
    if (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char* text = sqlite3_column_text(st, 0);
        out = text != nullptr ? reinterpret_cast<const char*>(text) : "NULL";
    }
    sqlite3_finalize(st);
    return out;
}

} // namespace gua::test
