// SPDX-License-Identifier: Apache-2.0
// `gua digest`'s output: the bodies on stdout, a file pair per recipient, or a dry-run listing.
#include "cli/digest_output.hpp"

#include "cli/output_file.hpp"
#include "core/fatal.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <sys/stat.h>

namespace gua::cli {

namespace {

nlohmann::json item_json(const DigestItem& i) {
    nlohmann::json j = report::digest_json(i.figures);
    j["address"] = i.message.address;
    j["subject"] = i.message.subject;
    return j;
}

std::string address_text(const report::DigestMessage& m) {
    return m.address.empty() ? std::string("(no address in [digest])") : m.address;
}

void ensure_dir(const std::string& dir) {
    if (::mkdir(dir.c_str(), 0777) == 0) {
        return;
    }
    const int err = errno;
    struct stat st {};
    if (err == EEXIST && ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        return;
    }
    throw Fatal(fmt::format("--output-dir {}: {}", dir,
                            err == EEXIST ? "exists and is not a directory" : std::strerror(err)),
                ExitCode::usage);
}

/// Unique stems: a second message with the same stem gets "-2", and so on.
std::vector<std::string> stems_of(const std::vector<DigestItem>& items) {
    std::map<std::string, int> seen;
    std::vector<std::string> out;
    for (const DigestItem& i : items) {
        const std::string stem = digest_file_stem(i.message);
        const int n = ++seen[stem];
        out.push_back(n == 1 ? stem : fmt::format("{}-{}", stem, n));
    }
    return out;
}

void put(const std::string& text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
}

} // namespace

std::string digest_file_stem(const report::DigestMessage& m) {
    std::string out = m.kind + "-";
    for (const char c : m.name) {
        const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        out += keep ? c : '_';
    }
    return out;
}

void print_digests(const std::vector<DigestItem>& items, const std::string& format) {
    if (format == "json") {
        nlohmann::json all = nlohmann::json::array();
        for (const DigestItem& i : items) {
            all.push_back(item_json(i));
        }
        put(nlohmann::json{{"digests", all}}.dump(2) + "\n");
    } else if (format == "html") {
        if (items.size() != 1) {
            throw Fatal(fmt::format("--format html prints one digest, not {}: give --output-dir "
                                    "DIR (one file per recipient) or narrow with --for",
                                    items.size()),
                        ExitCode::usage);
        }
        put(items.front().message.html);
    } else {
        if (items.empty()) {
            std::fputs("gua: no digest for this window and --for\n", stderr);
        }
        for (std::size_t k = 0; k < items.size(); ++k) {
            const report::DigestMessage& m = items[k].message;
            put(fmt::format("{}To: {} ({} {})\nSubject: {}\n\n{}", k == 0 ? "" : "\n",
                            address_text(m), m.kind, m.name, m.subject, m.text));
        }
    }
    std::fflush(stdout);
}

void write_digests(const std::vector<DigestItem>& items, const std::string& dir) {
    ensure_dir(dir);
    const std::vector<std::string> stems = stems_of(items);
    for (std::size_t k = 0; k < items.size(); ++k) {
        const std::string base = dir + "/" + stems[k];
        const report::DigestMessage& m = items[k].message;
        write_user_file("--output-dir", base + ".txt", m.text);
        write_user_file("--output-dir", base + ".html", m.html);
        write_user_file("--output-dir", base + ".json", item_json(items[k]).dump(2) + "\n");
        put(fmt::format("{}.txt, .html, .json: {} {} → {}\n", base, m.kind, m.name,
                        address_text(m)));
    }
    std::fflush(stdout);
}

void dry_run_digests(const std::vector<DigestItem>& items, const std::string& dir) {
    const std::vector<std::string> stems = stems_of(items);
    for (std::size_t k = 0; k < items.size(); ++k) {
        const report::DigestMessage& m = items[k].message;
        put(fmt::format(
            "would write {} {} → {}: {}{}\n", m.kind, m.name, address_text(m), m.subject,
            dir.empty() ? "" : fmt::format(" [{}/{}.txt, .html, .json]", dir, stems[k])));
    }
    put(fmt::format("{} digest{}; nothing written (--dry-run)\n", items.size(),
                    items.size() == 1 ? "" : "s"));
    std::fflush(stdout);
}

} // namespace gua::cli
