// SPDX-License-Identifier: Apache-2.0
// Where `gua digest` puts its messages: stdout, one file pair per recipient, or (--dry-run) a
// list of what would be written.
#pragma once

#include "report/digest.hpp"

#include <string>
#include <vector>

namespace gua::cli {

/// One digest: its figures and its message.
struct DigestItem {
    report::DigestFigures figures;
    report::DigestMessage message;
};

/// The file name stem of a message: kind, '-', and the name with every character but
/// [A-Za-z0-9._-] replaced by '_' ("user-alice", "user-uid_1000").
std::string digest_file_stem(const report::DigestMessage& m);

/// Prints every digest to stdout in `format` (text | json | html). Throws Fatal (usage) for
/// html with other than one digest.
void print_digests(const std::vector<DigestItem>& items, const std::string& format);

/// Writes STEM.txt, STEM.html and STEM.json per digest into `dir` (created when missing) and
/// lists the files on stdout. Throws Fatal when `dir` is not a directory or a write fails.
void write_digests(const std::vector<DigestItem>& items, const std::string& dir);

/// Lists on stdout who would get which digest (and the files --output-dir would write); writes
/// nothing.
void dry_run_digests(const std::vector<DigestItem>& items, const std::string& dir);

} // namespace gua::cli
