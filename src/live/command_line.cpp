// SPDX-License-Identifier: Apache-2.0
// Holders' command lines from /proc, checked against the holder's start time.
#include "live/command_line.hpp"

#include "identity/cmdline.hpp"
#include "identity/proc_file.hpp"
#include "identity/proc_stat.hpp"

namespace gua::live {

namespace {

constexpr std::size_t k_max_stat = 4096;
constexpr std::size_t k_max_cmdline = 64 * 1024; // more than any display needs

} // namespace

void fill_command_lines(NowModel& model, const std::string& proc_root) {
    for (HolderNow& h : model.holders) {
        if (!h.start_ticks) {
            continue;
        }
        const std::string dir = proc_root + "/" + std::to_string(h.pid) + "/";
        const Result<std::string> stat = identity::read_proc_file(dir + "stat", k_max_stat);
        if (!stat) {
            continue;
        }
        const Result<identity::ProcStat> parsed = identity::parse_proc_stat(stat.value());
        if (!parsed || parsed.value().start_ticks != *h.start_ticks) {
            continue;
        }
        if (const Result<std::string> raw =
                identity::read_proc_file(dir + "cmdline", k_max_cmdline)) {
            h.command_line = identity::display_cmdline(identity::split_cmdline(raw.value()));
        }
    }
}

} // namespace gua::live
