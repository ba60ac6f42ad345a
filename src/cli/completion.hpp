// SPDX-License-Identifier: Apache-2.0
// Shell completion for gua: the command line as plain data (read from the CLI11 definition) and
// the bash, zsh and fish scripts generated from it (`gua completion bash|zsh|fish`).
#pragma once

#include <string>
#include <vector>

namespace gua::cli {

/// What the value of an option (or a positional argument) is, for completing it.
enum class ValueKind {
    none,      ///< a flag: no value
    text,      ///< free text: nothing to complete
    choice,    ///< one of `choices`
    file,      ///< a file name
    directory, ///< a directory name
};

/// One option, or a positional argument when `names` is empty.
struct CompletionOption {
    std::vector<std::string> names; ///< "--db", "-q"; empty for a positional
    std::string help;               ///< one-line description
    ValueKind value = ValueKind::none;
    std::vector<std::string> choices; ///< for ValueKind::choice
};

/// A command with its options and subcommands, as the shell sees it.
struct CompletionCommand {
    std::string name; ///< "gua", "report", "stats"
    std::string help;
    std::vector<CompletionOption> options;
    std::vector<CompletionCommand> subcommands;
};

/// The bash script: defines _gua and registers it for gua and gpu-usage-audit. Needs only bash
/// itself (no bash-completion helpers).
std::string bash_completion(const CompletionCommand& root);

/// The zsh script (#compdef gua gpu-usage-audit), for a directory on $fpath as `_gua`.
std::string zsh_completion(const CompletionCommand& root);

/// The fish script (`complete -c gua ...` lines), for vendor_completions.d/gua.fish.
std::string fish_completion(const CompletionCommand& root);

} // namespace gua::cli
