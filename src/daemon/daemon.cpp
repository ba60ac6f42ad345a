// Daemon lifecycle: probe → lock → migrate → sample/write loop → final flush.
#include "daemon/daemon.hpp"

#include "audit/from_tick.hpp"
#include "config/config.hpp"
#include "core/clock.hpp"
#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "daemon/lock.hpp"
#include "daemon/log.hpp"
#include "daemon/notify.hpp"
#include "daemon/signals.hpp"
#include "identity/resolver.hpp"
#include "policy/runner.hpp"
#include "sampler/sampler.hpp"
#include "store/legacy.hpp"
#include "store/reader.hpp"
#include "store/retention.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <malloc.h>
#include <unistd.h>

namespace gua::daemon {

namespace {

std::string hostname() {
    std::array<char, 256> buf{};
    if (gethostname(buf.data(), buf.size() - 1) != 0) {
        return "unknown";
    }
    return buf.data();
}

bool is_version_mismatch(const Error& e) {
    return e.message.find("mismatch") != std::string::npos;
}

// nullptr when a stop signal arrived while waiting for a version mismatch to clear.
std::unique_ptr<telemetry::DeviceSource>
open_with_retry(const SourceFactory& open_source, SignalFlags& flags, Log& log, Clock& clock) {
    DurationUs backoff = 5 * k_us_per_second;
    while (true) {
        Result<std::unique_ptr<telemetry::DeviceSource>> source = open_source();
        if (source) {
            return std::move(source).value();
        }
        if (!is_version_mismatch(source.error())) {
            throw Fatal(source.error().message, ExitCode::no_driver);
        }
        log.line(
            fmt::format("{}; retrying in {}", source.error().message, format_duration(backoff)));
        clock.sleep_until(clock.mono_now() + backoff, flags.stop);
        if (flags.stop.load()) {
            log.line(fmt::format("stopped while waiting for NVML ({}); nothing recorded",
                                 source.error().message));
            return nullptr;
        }
        backoff = std::min<DurationUs>(backoff * 2, 5 * k_us_per_minute);
    }
}

std::string tick_summary(const telemetry::Tick& tick, const audit::Thresholds& thresholds) {
    std::string line = fmt::format("tick {}", tick.seq);
    std::size_t procs = 0;
    int errors = 0;
    for (const telemetry::CardTickRecord& c : tick.cards) {
        const audit::CardTick card = audit::to_card_tick(tick, c);
        line += fmt::format("  GPU-{}={}", c.device.index, audit::dominant_state(card, thresholds));
        procs += c.processes.size();
        errors += c.read_errors;
    }
    for (const std::string& lost : tick.lost_uuids) {
        line += fmt::format("  {}=LOST", lost);
    }
    line += fmt::format("  ({} processes", procs);
    if (errors > 0) {
        line += fmt::format(", {} read errors", errors);
    }
    return line + ")";
}

} // namespace

int run_daemon(const DaemonOptions& options, const SourceFactory& open_source) {
    SignalFlags& flags = install_signal_handlers();
    Log log(options.log_path);
    SystemClock clock;
    Result<config::Config> cfg = config::load_effective_config(options.config_path);
    if (!cfg) {
        throw Fatal(cfg.error().message, ExitCode::usage);
    }
    audit::Thresholds thresholds = cfg.value().thresholds;
    exporter::ExporterOptions exporter_options = options.exporter;
    if (cfg.value().pricing.configured) {
        exporter_options.pricing = cfg.value().pricing;
    }

    std::unique_ptr<telemetry::DeviceSource> source =
        open_with_retry(open_source, flags, log, clock);
    if (!source) {
        return 0; // stopped (SIGTERM/SIGINT) before the driver became usable
    }
    const std::string driver = source->driver_version();
    const std::size_t cards = source->devices().size();

    DatabaseLock lock(options.db);
    store::Database db(options.db, store::OpenMode::create);
    store::migrate_to(db, store::k_schema_version);
    if (store::has_legacy_ticks(db)) {
        log.line(fmt::format("{}: converting the card-ticks of an older gua to tick blocks",
                             options.db));
        // Long conversions keep systemd's start timeout from expiring (Type=notify).
        const std::uint64_t converted =
            store::convert_legacy_ticks(db, thresholds, [](std::uint64_t, std::uint64_t) {
                notify_service_manager("EXTEND_TIMEOUT_USEC=60000000");
            });
        log.line(fmt::format("{}: {} card-ticks converted; `gua db vacuum` returns the space the "
                             "old tables used",
                             options.db, converted));
    }
    db.exec("PRAGMA journal_size_limit = 67108864");
    // A tick writes a few pages; SQLite's default 2 MB page cache would mostly hold pages read
    // once by an hourly rollup (the OS page cache serves those again just as well).
    db.exec("PRAGMA cache_size = -256");
    const std::unique_ptr<exporter::Exporter> metrics =
        exporter::start_exporter(exporter_options, db, thresholds, driver, options.interval_us,
                                 [&log](const std::string& message) { log.line(message); });
    store::Writer writer(db, store::RunInfo{hostname(), driver, options.source_name,
                                            options.interval_us, thresholds.active_util_pct,
                                            clock.wall_now(), thresholds.held_mib,
                                            thresholds.graphics_is_holder});
    store::Retention retention(db, cfg.value().retention);
    log.line(fmt::format("gua daemon started: host={} driver={} gpus={} interval={} db={}",
                         hostname(), driver.empty() ? "?" : driver, cards,
                         format_duration(options.interval_us), options.db));
    policy::PolicyRunner policy_runner(
        db, cfg.value().policy, thresholds, [&log](const std::string& line) { log.line(line); },
        policy::RunnerOptions{"/proc", "/var/run/utmp", "/dev", hostname(),
                              static_cast<std::uint32_t>(getpid())});
    policy_runner.start(clock.wall_now());
    notify_service_manager("READY=1");
    // Startup (schema creation or conversion, configuration, NVML discovery) leaves freed heap
    // behind that the tick loop never needs again: give it back to the system.
    ::malloc_trim(0);

    identity::Resolver resolver;
    sampler::SamplerOptions so;
    so.interval_us = options.interval_us;
    so.active_threshold_pct = thresholds.active_util_pct;
    so.graphics_is_holder = thresholds.graphics_is_holder;
    so.max_ticks = options.max_ticks;
    sampler::Sampler sampler(*source, clock, resolver, so);
    std::uint64_t failed_writes = 0;
    WatchdogPacer watchdog = WatchdogPacer::from_environment();
    sampler.run(
        flags.stop,
        [&](const telemetry::Tick& tick) {
            try {
                writer.write(tick);
            } catch (const Fatal& e) {
                ++failed_writes;
                log.line(fmt::format("tick {} not written: {}", tick.seq, e.what()));
            }
            if (metrics) {
                metrics->on_tick(tick, failed_writes);
            }
            try {
                policy_runner.on_tick(tick, clock.wall_now());
            } catch (const Fatal& e) {
                log.line(fmt::format("tick {}: policy not applied: {}", tick.seq, e.what()));
            }
            try {
                retention.step(clock.wall_now());
            } catch (const Fatal& e) {
                log.line(fmt::format("retention step failed: {}", e.what()));
            }
            if (!options.quiet) {
                log.line(tick_summary(tick, thresholds));
            }
            if (watchdog.due(clock.mono_now())) {
                notify_service_manager("WATCHDOG=1");
            }
            if (flags.reload.exchange(false)) {
                log.reopen();
                Result<config::Config> fresh = config::load_effective_config(options.config_path);
                if (fresh) {
                    thresholds = fresh.value().thresholds;
                    policy_runner.configure(fresh.value().policy, thresholds, clock.wall_now());
                    log.line("configuration reloaded (the active threshold applies from the "
                             "next daemon start)");
                } else {
                    log.line("configuration not reloaded: " + fresh.error().message);
                }
            }
        },
        [&](DurationUs late) {
            if (metrics) {
                metrics->on_overrun();
            }
            log.line(fmt::format("tick overran its schedule by {}; skipping ahead without "
                                 "catch-up",
                                 format_duration(late)));
        });
    notify_service_manager("STOPPING=1");
    writer.finish(clock.wall_now());
    const std::uint64_t total = store::Reader(db).card_tick_count();
    log.line(fmt::format(
        "gua daemon stopped after {} ticks; {}: {} card-tick rows written, {} in "
        "total{}",
        sampler.ticks(), options.db, writer.card_rows(), total,
        failed_writes > 0 ? fmt::format(" ({} ticks failed to write)", failed_writes) : ""));
    return 0;
}

} // namespace gua::daemon
