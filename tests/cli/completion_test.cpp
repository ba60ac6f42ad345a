// SPDX-License-Identifier: Apache-2.0
// Shell completion generated from the command line definition (`gua completion bash|zsh|fish`),
// loaded into each shell that is installed: what the shell offers must be what `--help` lists.
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace gua::completion_test { // named after the file: unique in a unity batch

using Words = std::set<std::string>;

/// The program's absolute path, "" when it is not installed.
std::string which(const std::string& program) {
    const test::RunResult r = test::run("/bin/sh", {"-c", "command -v \"$0\"", program});
    std::string path = r.exit_code == 0 ? r.out : "";
    while (!path.empty() && path.back() == '\n') {
        path.pop_back();
    }
    return path;
}

Words lines(const std::string& text) {
    Words out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) {
            line.pop_back();
        }
        if (!line.empty()) {
            out.insert(line);
        }
    }
    return out;
}

/// The help of `gua <args> --help`, read back: subcommand names, and option names ("--db", "-h").
struct Help {
    Words subcommands;
    Words options;
};

Help help_of(const std::vector<std::string>& args) {
    std::vector<std::string> argv = args;
    argv.push_back("--help");
    const test::RunResult r = test::run_gua(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Help h;
    std::istringstream in(r.out);
    std::string line;
    std::string section;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == ':' && line[0] != ' ') {
            section = line;
        } else if (line.rfind("  ", 0) == 0 && line.size() > 2 && line[2] != ' ') {
            const std::string first = line.substr(2, line.find(' ', 2) - 2);
            if (section == "Subcommands:") {
                h.subcommands.insert(first);
            } else if (section == "Options:") {
                std::istringstream names(first);
                std::string name;
                while (std::getline(names, name, ',')) {
                    h.options.insert(name);
                }
            }
        }
    }
    return h;
}

Words with_prefix(const Words& words, const std::string& prefix) {
    Words out;
    for (const std::string& w : words) {
        if (w.rfind(prefix, 0) == 0) {
            out.insert(w);
        }
    }
    return out;
}

class Completion : public ::testing::Test {
  protected:
    void SetUp() override {
        for (const char* shell : {"bash", "zsh", "fish"}) {
            const test::RunResult r = test::run_gua({"completion", shell});
            ASSERT_EQ(r.exit_code, 0) << r.err;
            ASSERT_FALSE(r.out.empty());
            std::ofstream(m_dir.file(std::string("gua.") + shell)) << r.out;
        }
        std::filesystem::create_directory(m_dir.file("zsh"));
        std::filesystem::copy_file(m_dir.file("gua.zsh"), m_dir.file("zsh/_gua"));
        std::filesystem::create_directory(m_dir.file("files"));
        std::ofstream(m_dir.file("files/gauge.db")) << "";
        std::ofstream(m_dir.file("files/garden.toml")) << "";
    }

    /// What bash's `complete -F` function offers when TAB is pressed after `line`, with the
    /// words split as bash does (also at '=', unless `split_equals` is false, as when '=' is
    /// taken out of COMP_WORDBREAKS).
    Words bash(const std::string& line, bool split_equals = true) const {
        std::string words;
        for (const char c : line) {
            words += c == '=' && split_equals ? std::string(" = ") : std::string(1, c);
        }
        const test::RunResult r = test::run(
            "/bin/bash",
            {"-c",
             "source \"$1\" && read -ra COMP_WORDS <<<\"$2\" && COMP_CWORD=${#COMP_WORDS[@]} && "
             "{ [[ $2 != *' ' ]] && COMP_CWORD=$((COMP_CWORD - 1)) || COMP_WORDS+=(''); } && "
             "_gua 2>/dev/null && printf '%s\\n' \"${COMPREPLY[@]}\"",
             "bash", m_dir.file("gua.bash"), words});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return lines(r.out);
    }

    Words zsh(const std::string& zsh, const std::string& line) const {
        const test::RunResult r = test::run(
            "/usr/bin/timeout", {"60", zsh, std::string(GUA_SOURCE_DIR) + "/tests/cli/complete.zsh",
                                 m_dir.file("zsh"), line});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return lines(r.out);
    }

    Words fish(const std::string& fish, const std::string& line) const {
        const test::RunResult r =
            test::run(fish, {"--no-config", "-c", "source $argv[1]; complete -C $argv[2]",
                             m_dir.file("gua.fish"), line});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        Words out;
        for (const std::string& l : lines(r.out)) {
            out.insert(l.substr(0, l.find('\t')));
        }
        return out;
    }

    test::TempDir m_dir;
};

TEST_F(Completion, BashOffersTheCommandsOptionsAndValuesOfTheHelp) {
    const Help top = help_of({});
    ASSERT_GE(top.subcommands.size(), 10U);
    EXPECT_EQ(bash("gua "), top.subcommands);
    EXPECT_EQ(bash("gua re"), with_prefix(top.subcommands, "re"));
    EXPECT_EQ(bash("gua --"), with_prefix(top.options, "--"));

    const Help report = help_of({"report"});
    EXPECT_EQ(bash("gua report --"), with_prefix(report.options, "--"));
    EXPECT_EQ(bash("gua report --since 7d --f"), with_prefix(report.options, "--f"));
    EXPECT_EQ(bash("gua report --format "), (Words{"csv", "html", "json", "text"}));
    EXPECT_EQ(bash("gua report --format=j"), (Words{"json"}));
    EXPECT_EQ(bash("gua report --format=j", false), (Words{"--format=json"}));
    EXPECT_EQ(bash("gua report --format="), (Words{"csv", "html", "json", "text"}));
    EXPECT_TRUE(bash("gua report --since ").empty()) << "a duration has nothing to complete";

    const Help db = help_of({"db"});
    EXPECT_EQ(bash("gua db "), db.subcommands);
    EXPECT_EQ(bash("gua db --db stats st"), with_prefix(db.subcommands, "st"))
        << "the value of --db is not taken for a subcommand";
    EXPECT_EQ(bash("gua db stats --"), with_prefix(help_of({"db", "stats"}).options, "--"));

    EXPECT_EQ(bash("gua report --db " + m_dir.file("files/ga")),
              (Words{m_dir.file("files/garden.toml"), m_dir.file("files/gauge.db")}));
    const test::RunResult registered =
        test::run("/bin/bash", {"-c", "source \"$1\" && complete -p gua gpu-usage-audit", "bash",
                                m_dir.file("gua.bash")});
    EXPECT_EQ(lines(registered.out),
              (Words{"complete -F _gua gpu-usage-audit", "complete -F _gua gua"}));
    EXPECT_EQ(bash("gua completion "), Words{}) << "the hidden command is not offered";
    EXPECT_EQ(bash("gua uninstall --"), with_prefix(help_of({"uninstall"}).options, "--"))
        << "nor a hidden option";
}

TEST_F(Completion, ZshOffersTheCommandsOptionsAndValuesOfTheHelp) {
    const std::string zsh_path = which("zsh");
    if (zsh_path.empty()) {
        GTEST_SKIP() << "zsh is not installed";
    }
    const Help top = help_of({});
    EXPECT_EQ(zsh(zsh_path, "gua "), top.subcommands);
    EXPECT_EQ(zsh(zsh_path, "gua report --"), with_prefix(help_of({"report"}).options, "--"));
    EXPECT_EQ(zsh(zsh_path, "gua report --format "), (Words{"csv", "html", "json", "text"}));
    EXPECT_EQ(zsh(zsh_path, "gua db "), help_of({"db"}).subcommands);
    EXPECT_EQ(zsh(zsh_path, "gua db backup --"),
              with_prefix(help_of({"db", "backup"}).options, "--"));
}

TEST_F(Completion, FishOffersTheCommandsOptionsAndValuesOfTheHelp) {
    const std::string fish_path = which("fish");
    if (fish_path.empty()) {
        GTEST_SKIP() << "fish is not installed";
    }
    const Help top = help_of({});
    EXPECT_EQ(fish(fish_path, "gua "), top.subcommands);
    EXPECT_EQ(fish(fish_path, "gua report --"), with_prefix(help_of({"report"}).options, "--"));
    EXPECT_EQ(fish(fish_path, "gua report --format "), (Words{"csv", "html", "json", "text"}));
    EXPECT_EQ(fish(fish_path, "gua db "), help_of({"db"}).subcommands);
    EXPECT_EQ(fish(fish_path, "gua db stats --"),
              with_prefix(help_of({"db", "stats"}).options, "--"));
}

} // namespace gua::completion_test
