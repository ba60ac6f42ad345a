// SPDX-License-Identifier: Apache-2.0
// Run kinds of a database, read before a writer opens it for writing.
#include "store/run_kinds.hpp"

#include "core/fatal.hpp"
#include "store/file_kind.hpp"

#include <fmt/format.h>

namespace gua::store {

namespace {

std::string runs_text(std::int64_t n) {
    return n == 1 ? "1 run" : fmt::format("{} runs", n);
}

} // namespace

bool is_demo_source(std::string_view source) {
    return source.starts_with("synthetic:");
}

RunKinds run_kinds(Database& db) {
    RunKinds kinds;
    if (db.scalar("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'run'") ==
        0) {
        return kinds;
    }
    Statement st = db.prepare("SELECT source, count(*) FROM run GROUP BY source ORDER BY source");
    while (st.step()) {
        const std::string source = st.text(0);
        if (is_demo_source(source)) {
            kinds.demo += st.int64(1);
        } else {
            kinds.recorded += st.int64(1);
            if (kinds.recorded_source.empty()) {
                kinds.recorded_source = source;
            }
        }
    }
    return kinds;
}

RunKinds run_kinds_of(const std::string& path) {
    if (probe_file(path).kind != FileKind::gua) {
        return RunKinds{};
    }
    Database db(path, OpenMode::read_only);
    return run_kinds(db);
}

void refuse_recorded_data(const std::string& path) {
    const RunKinds kinds = run_kinds_of(path);
    if (kinds.recorded > 0) {
        throw Fatal(fmt::format("{} holds recorded data ({}, source '{}'); demo data never goes "
                                "there (name a new file, or leave out --db)",
                                path, runs_text(kinds.recorded), kinds.recorded_source),
                    ExitCode::usage);
    }
}

void refuse_demo_data(const std::string& path) {
    const RunKinds kinds = run_kinds_of(path);
    if (kinds.demo > 0) {
        throw Fatal(fmt::format("{} holds demo data ({} of `gua demo`); recorded data never goes "
                                "there (use another --db)",
                                path, runs_text(kinds.demo)),
                    ExitCode::usage);
    }
}

} // namespace gua::store
