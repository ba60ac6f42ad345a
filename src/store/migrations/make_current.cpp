// SPDX-License-Identifier: Apache-2.0
// Build-time tool (not part of gua): runs every migration one version at a time on a new file and
// writes the C++ source of store::current_schema_sql(), so a new database is made in one step.
#include "core/fatal.hpp"
#include "store/database.hpp"
#include "store/schema.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace gua::store {
// This tool makes its file step by step: there is no one-step schema yet.
std::string_view current_schema_sql() {
    return {};
}
} // namespace gua::store

namespace {

std::string source_of(const std::string& sql) {
    return "// Generated at build time by src/store/migrations/make_current.cpp: never edited.\n"
           "#include \"store/schema.hpp\"\n\n"
           "#pragma GCC diagnostic ignored \"-Woverlength-strings\"\n\n"
           "namespace gua::store {\n"
           "std::string_view current_schema_sql() {\n"
           "    return R\"gua_sql(" +
           sql + ")gua_sql\";\n}\n} // namespace gua::store\n";
}

/// Writes `text` to `path` unless it already holds exactly that (nothing recompiles then).
void write_if_changed(const std::string& path, const std::string& text) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream old;
    old << in.rdbuf();
    if (in && old.str() == text) {
        return;
    }
    std::ofstream out(path + ".tmp", std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
        throw gua::Fatal("cannot write " + path + ".tmp");
    }
    std::filesystem::rename(path + ".tmp", path);
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: gua_make_current_schema OUTPUT.cpp\n";
        return 2;
    }
    const std::string output = argv[1];
    const std::string scratch = output + ".db";
    try {
        std::filesystem::remove(scratch);
        std::string sql;
        {
            gua::store::Database db(scratch, gua::store::OpenMode::create);
            gua::store::migrate(db);
            sql = gua::store::schema_sql_of(db);
        }
        for (const char* suffix : {"", "-wal", "-shm"}) {
            std::filesystem::remove(scratch + suffix);
        }
        write_if_changed(output, source_of(sql));
    } catch (const std::exception& e) {
        std::cerr << "gua_make_current_schema: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
