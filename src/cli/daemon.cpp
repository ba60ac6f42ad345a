// SPDX-License-Identifier: Apache-2.0
// `gua daemon`: record every card-tick from NVML into the database until stopped.
#include "daemon/daemon.hpp"

#include "alloc/settings.hpp"
#include "cli/command.hpp"
#include "cli/validators.hpp"
#include "config/config.hpp"
#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "export/http_server.hpp"
#include "nvml/open.hpp"
#include "store/paths.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <vector>

namespace gua::cli {

namespace {

struct DaemonCommandOptions {
    std::string db;
    std::string interval;
    std::string config;
    std::string nvml_library;
    std::string log;
    bool quiet = false;
    std::optional<std::uint64_t> max_ticks;
    std::optional<std::string> listen;
    std::optional<std::string> web_config;
    std::optional<double> price_per_gpu_hour;
    std::vector<std::string> allocation_dirs;
};

// [allocations] with --allocation-dir replacing the file's mapping_dir when given.
alloc::Settings allocation_settings(const DaemonCommandOptions& o, const config::Config& cfg) {
    alloc::Settings settings = cfg.allocations;
    if (!o.allocation_dirs.empty()) {
        settings.mapping_dirs.clear();
        for (const std::string& dir : o.allocation_dirs) {
            if (auto r = alloc::validate_source_path("--allocation-dir", dir); !r) {
                throw Fatal(r.error().message, ExitCode::usage);
            }
            if (std::find(settings.mapping_dirs.begin(), settings.mapping_dirs.end(), dir) ==
                settings.mapping_dirs.end()) {
                settings.mapping_dirs.push_back(dir);
            }
        }
    }
    return settings;
}

// --web-config, else [daemon] web_config (relative to gua.toml's folder); needs an address.
exporter::WebConfig web_config(const DaemonCommandOptions& o, const config::Config& cfg,
                               const std::string& listen) {
    std::string path;
    if (o.web_config) {
        path = *o.web_config;
    } else if (cfg.web_config) {
        path = *cfg.web_config;
        if (!path.empty() && path.front() != '/' && !cfg.path.empty()) {
            path = (std::filesystem::path(cfg.path).parent_path() / path).string();
        }
    }
    if (path.empty()) {
        return {};
    }
    if (listen.empty()) {
        throw Fatal("--web-config: needs --listen (or [daemon] listen) to secure", ExitCode::usage);
    }
    return exporter::load_web_config(path);
}

int run(const DaemonCommandOptions& o) {
    Result<config::Config> cfg = config::load_effective_config(o.config);
    if (!cfg) {
        throw Fatal(cfg.error().message, ExitCode::usage);
    }
    daemon::DaemonOptions d;
    d.db = !o.db.empty() ? o.db : cfg.value().db.value_or(store::default_write_path());
    d.interval_us = cfg.value().interval_us.value_or(30 * k_us_per_second);
    if (!o.interval.empty()) {
        const Result<DurationUs> parsed = parse_duration(o.interval);
        if (!parsed) {
            throw Fatal("--interval: " + parsed.error().message, ExitCode::usage);
        }
        d.interval_us = parsed.value();
    }
    if (d.interval_us < 100 * k_us_per_ms) {
        throw Fatal("--interval: must be at least 100ms", ExitCode::usage);
    }
    d.config_path = o.config.empty() ? cfg.value().path : o.config;
    d.log_path = o.log;
    d.quiet = o.quiet;
    d.max_ticks = o.max_ticks;
    // --listen, else [daemon] listen of gua.toml; a bad address names where it came from.
    const std::string listen = o.listen ? *o.listen : cfg.value().listen.value_or("");
    if (const auto parsed = exporter::parse_listen(listen); !listen.empty() && !parsed) {
        throw Fatal(o.listen ? parsed.error().message
                             : fmt::format("{}: daemon.listen = \"{}\": expected PORT, HOST:PORT "
                                           "or [IPv6]:PORT with a numeric host",
                                           cfg.value().path, listen),
                    ExitCode::usage);
    }
    d.exporter.listen = listen;
    d.exporter.web = web_config(o, cfg.value(), listen);
    d.kernel_log = cfg.value().kernel_log.value_or("/dev/kmsg");
    d.exporter.price_per_gpu_hour = o.price_per_gpu_hour;
    // The sources start reading now; the sampler crosses their answers with every card-tick.
    const std::unique_ptr<alloc::AllocationSource> allocations =
        alloc::make_allocation_source(allocation_settings(o, cfg.value()));
    d.allocations = allocations.get();
    const std::string library = o.nvml_library;
    return daemon::run_daemon(d, [library] { return nvml::open_nvml_source(library); });
}

} // namespace

Runner register_daemon(CLI::App& app) {
    auto o = std::make_shared<DaemonCommandOptions>();
    CLI::App* cmd = app.add_subcommand("daemon", "Record GPU usage from NVML until stopped");
    cmd->add_option("--db", o->db,
                    "Database to write (default: /var/lib/gua/gua.db as root, "
                    "else ~/.local/state/gua/gua.db)");
    cmd->add_option("--interval", o->interval, "Tick length (default 30s)");
    cmd->add_option("--config", o->config,
                    "Config file (default: ~/.config/gua/gua.toml or "
                    "/etc/gua/gua.toml if present)");
    cmd->add_option("--nvml-library", o->nvml_library,
                    "Path of libnvidia-ml.so.1 (default: $GUA_NVML_LIBRARY, else the system's)");
    cmd->add_option("--log", o->log, "Append log lines to this file (SIGHUP reopens it)");
    cmd->add_flag("--quiet,-q", o->quiet, "No line per tick");
    cmd->add_option("--ticks", o->max_ticks, "Stop after this many ticks");
    cmd->add_option("--listen", o->listen,
                    "Serve Prometheus metrics at /metrics and the report at / (HTML, last 7 "
                    "days), /report and /report.json on PORT (loopback), HOST:PORT or "
                    "[IPv6]:PORT (default: [daemon] listen of gua.toml, else off)")
        ->check(non_empty());
    cmd->add_option("--web-config", o->web_config,
                    "Secure --listen with an exporter-toolkit web config (YAML): TLS, client "
                    "certificates, basic_auth_users with bcrypt hashes, and gua: {pages: "
                    "metrics-only} (default: [daemon] web_config of gua.toml)")
        ->check(non_empty());
    cmd->add_option(
           "--price-per-gpu-hour", o->price_per_gpu_hour,
           "Price of every GPU-hour for gua_waste_dollars_total (default: [pricing] of gua.toml, "
           "else its example prices)")
        ->check(price_per_gpu_hour());
    cmd->add_option("--allocation-dir", o->allocation_dirs,
                    "Job-mapping directory (one file per GPU index, holding the job ids on it) "
                    "written by a Slurm prolog or another scheduler; repeatable; replaces "
                    "[allocations] mapping_dir")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    return [o] { return run(*o); };
}

} // namespace gua::cli
