// SPDX-License-Identifier: Apache-2.0
// Daemon lifecycle: probe → lock → migrate → sample/write loop → final flush.
#include "daemon/daemon.hpp"

#include "audit/from_tick.hpp"
#include "config/config.hpp"
#include "core/clock.hpp"
#include "core/duration.hpp"
#include "core/fatal.hpp"
#include "daemon/delivery.hpp"
#include "daemon/fault_recorder.hpp"
#include "daemon/known_devices.hpp"
#include "daemon/lock.hpp"
#include "daemon/log.hpp"
#include "daemon/notify.hpp"
#include "daemon/report_pages.hpp"
#include "daemon/signals.hpp"
#include "daemon/storage_watch.hpp"
#include "identity/resolver.hpp"
#include "policy/runner.hpp"
#include "sampler/sampler.hpp"
#include "store/db_error.hpp"
#include "store/legacy.hpp"
#include "store/reader.hpp"
#include "store/retention.hpp"
#include "store/run_kinds.hpp"
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

// nullptr when a stop signal arrived while waiting for a version mismatch to clear.
std::unique_ptr<telemetry::DeviceSource>
open_with_retry(const SourceFactory& open_source, SignalFlags& flags, Log& log, Clock& clock) {
    DurationUs backoff = 5 * k_us_per_second;
    while (true) {
        Result<std::unique_ptr<telemetry::DeviceSource>> source = open_source();
        if (source) {
            return std::move(source).value();
        }
        if (source.error().kind != ErrorKind::version_mismatch) {
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

/// Says once, loudly, when the driver shows no GPU (nothing gets recorded) and when GPUs appear.
class GpuPresence {
  public:
    GpuPresence(DatabaseLock& lock, Log& log, const std::string& driver)
        : m_lock(lock), m_log(log), m_driver(driver) {}
    void see(std::size_t cards, std::size_t lost) {
        const bool none = cards == 0 && lost == 0;
        if (none == m_none) {
            return;
        }
        const bool was_none = m_none.value_or(false);
        m_none = none;
        m_lock.set_alert(ops::DaemonAlert::no_gpus, none);
        if (!none && !was_none) {
            return; // GPUs from the start: nothing to say
        }
        if (none) {
            m_log.line(fmt::format("WARNING: NVML (driver {}) shows no GPU: nothing is recorded "
                                   "until one appears; check `nvidia-smi` and `gua doctor`",
                                   m_driver.empty() ? "?" : m_driver));
        } else {
            m_log.line(
                fmt::format("{} GPU{} visible again; recording", cards, cards == 1 ? "" : "s"));
        }
    }

  private:
    DatabaseLock& m_lock;
    Log& m_log;
    std::string m_driver;
    std::optional<bool> m_none;
};

/// The log line of a SIGHUP reload: the policy and retention take the fresh configuration; what
/// the recording depends on keeps its start-up value, so the rows, rollups, /metrics and the
/// policy never disagree. A change that waits for a restart is named.
std::string reload_line(const config::Config& running, const config::Config& fresh) {
    std::string line = "configuration reloaded: [policy] and [retention] apply now; [thresholds], "
                       "[pricing] and [daemon] keep their start-up values until the daemon "
                       "restarts";
    if (!(fresh.thresholds == running.thresholds)) {
        line += fmt::format(" (the changed [thresholds] are not applied: active_util_pct {}, "
                            "held_mib {} stay in force)",
                            running.thresholds.active_util_pct, running.thresholds.held_mib);
    }
    return line;
}

/// Makes the database ready to record: schema migrated, an older gua's card-ticks converted,
/// the journal and page cache sized for a tick at a time.
void prepare_database(store::Database& db, const DaemonOptions& options,
                      const audit::Thresholds& thresholds, Log& log) {
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
}

/// The exporter's options: the dollar counters use [pricing] (its example prices without the
/// section, as the report does) unless --price-per-gpu-hour gave one price for every model; with
/// --listen, the report pages, which read the database through their own connection on the HTTP
/// server's worker thread (never on the sampling thread).
exporter::ExporterOptions exporter_options_of(const DaemonOptions& options,
                                              const config::Config& cfg, Clock& clock) {
    exporter::ExporterOptions exporter_options = options.exporter;
    exporter_options.pricing = cfg.pricing;
    exporter_options.time_zone = cfg.time_zone;
    if (exporter_options.listen.empty()) {
        return exporter_options;
    }
    ReportPagesOptions pages;
    pages.db_path = options.db;
    pages.settings.thresholds = cfg.thresholds;
    pages.settings.pricing = cfg.pricing;
    pages.settings.energy = cfg.energy;
    pages.settings.health = cfg.health;
    pages.settings.grouping = cfg.grouping;
    pages.settings.time_zone = cfg.time_zone;
    if (options.exporter.price_per_gpu_hour) {
        pages.settings.pricing.override_micros_per_gpu_hour =
            audit::to_micros(*options.exporter.price_per_gpu_hour);
    }
    pages.now = [&clock] { return clock.wall_now(); };
    exporter_options.pages = report_pages(std::move(pages));
    return exporter_options;
}

sampler::SamplerOptions sampler_options_of(const DaemonOptions& options,
                                           const audit::Thresholds& thresholds) {
    sampler::SamplerOptions so;
    so.interval_us = options.interval_us;
    so.active_threshold_pct = thresholds.active_util_pct;
    so.graphics_is_holder = thresholds.graphics_is_holder;
    so.held_mib = thresholds.held_mib;
    so.max_ticks = options.max_ticks;
    so.allocations = options.allocations;
    return so;
}

/// What the daemon does with each tick, and the run's parts it does it with.
struct TickLoop {
    const DaemonOptions& options;
    const config::Config& cfg;
    SignalFlags& flags;
    Log& log;
    Clock& clock;
    store::Database& db;
    store::Writer& writer;
    StorageWatch& storage;
    exporter::Exporter* metrics;
    policy::PolicyRunner& policy_runner;
    std::optional<store::Retention>& retention;
    GpuPresence& gpus;
    FaultRecorder& faults;
    WatchdogPacer watchdog = WatchdogPacer::from_environment();

    /// Writes the tick (or stops when the database is gone), then feeds the exporter, the
    /// policy and retention; a failure of one is logged and the others still run.
    void on_tick(const telemetry::Tick& tick) {
        gpus.see(tick.cards.size(), tick.lost_uuids.size());
        bool stored = false;
        if (storage.database_present(tick.seq)) {
            try {
                writer.write(tick);
                stored = true;
                storage.stored(tick.cards.size());
            } catch (const store::DbError& e) {
                storage.failed(tick.seq, e.what());
            }
        } else {
            flags.stop.store(true);
        }
        faults.on_tick(tick, metrics);
        if (metrics != nullptr) {
            metrics->on_tick(tick, stored, storage.write_errors());
        }
        try {
            policy_runner.on_tick(tick, clock.wall_now());
        } catch (const store::DbError& e) {
            log.line(fmt::format("tick {}: policy not applied: {}", tick.seq, e.what()));
        }
        try {
            retention->step(clock.wall_now());
        } catch (const store::DbError& e) {
            log.line(fmt::format("retention step failed: {}", e.what()));
        }
        if (!options.quiet) {
            log.line(tick_summary(tick, cfg.thresholds));
        }
        if (watchdog.due(clock.mono_now())) {
            notify_service_manager("WATCHDOG=1");
        }
        if (flags.reload.exchange(false)) {
            reload();
        }
    }

    /// SIGHUP: the log reopened, the policy and retention from the configuration read again.
    void reload() {
        log.reopen();
        Result<config::Config> fresh = config::load_effective_config(options.config_path);
        if (fresh) {
            policy_runner.configure(fresh.value().policy, cfg.thresholds, clock.wall_now());
            retention.emplace(db, fresh.value().retention, cfg.thresholds);
            log.line(reload_line(cfg, fresh.value()));
        } else {
            log.line("configuration not reloaded: " + fresh.error().message);
        }
    }

    void on_overrun(DurationUs late) {
        if (metrics != nullptr) {
            metrics->on_overrun();
        }
        log.line(fmt::format("tick overran its schedule by {}; skipping ahead without "
                             "catch-up",
                             format_duration(late)));
    }
};

/// The run's end: written to the database (when it can be), the write-ahead log emptied when
/// the file is gone, and the last log line. Returns the exit status.
int finish_run(const DaemonOptions& options, store::Database& db, store::Writer& writer,
               StorageWatch& storage, Log& log, std::uint64_t ticks, TimeUs now) {
    std::string total = "?";
    try {
        writer.finish(now);
        total = std::to_string(store::Reader(db).card_tick_count());
    } catch (const store::DbError& e) {
        log.line(fmt::format("the run's end could not be stored: {}", e.what()));
    }
    if (storage.gone()) {
        // The -wal file at the path is still this file's: emptied, it cannot be replayed into a
        // database created (or restored) at the path later.
        db.exec_noexcept("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    std::string not_stored;
    if (storage.gone()) {
        not_stored =
            fmt::format(" ({} ticks not stored: {})", storage.write_errors(), *storage.gone());
    } else if (storage.write_errors() > 0) {
        not_stored =
            fmt::format(" ({} ticks failed to write and are not stored)", storage.write_errors());
    }
    log.line(fmt::format("gua daemon stopped after {} ticks; {}: {} card-tick rows written, {} in "
                         "total{}",
                         ticks, options.db, storage.stored_card_ticks(), total, not_stored));
    return storage.gone() ? static_cast<int>(ExitCode::failure) : 0;
}

/// The start line, and what the daemon says of its allocation sources and measurement.
void log_start(Log& log, const DaemonOptions& options, telemetry::DeviceSource& source,
               const std::string& driver, std::size_t cards) {
    log.line(fmt::format("gua daemon started: host={} driver={} gpus={} interval={} db={}",
                         hostname(), driver.empty() ? "?" : driver, cards,
                         format_duration(options.interval_us), options.db));
    if (options.allocations != nullptr) {
        log.line("gua daemon: allocations from " + options.allocations->describe());
    }
    if (const std::string note = source.measurement_note(); !note.empty()) {
        log.line("gua daemon: " + note);
    }
    source.set_notice_sink([&log](const std::string& line) { log.line(line); });
}

} // namespace

int run_daemon(const DaemonOptions& options, const SourceFactory& open_source) {
    SignalFlags& flags = install_signal_handlers();
    Log log(options.log_path);
    const std::unique_ptr<Clock> clock_owner = clock_from_environment(); // test-only seam
    Clock& clock = *clock_owner;
    Result<config::Config> loaded = config::load_effective_config(options.config_path);
    if (!loaded) {
        throw Fatal(loaded.error().message, ExitCode::usage);
    }
    const config::Config cfg = std::move(loaded).value();
    const audit::Thresholds thresholds = cfg.thresholds;
    exporter::ExporterOptions exporter_options = exporter_options_of(options, cfg, clock);
    std::unique_ptr<telemetry::DeviceSource> source =
        open_with_retry(open_source, flags, log, clock);
    if (!source) {
        return 0; // stopped (SIGTERM/SIGINT) before the driver became usable
    }
    const std::string driver = source->driver_version();
    const std::size_t cards = source->devices().size();

    // Before the first SQLite connection, destroyed after the last (see DatabaseLock).
    DatabaseLock lock(options.db);
    store::refuse_demo_data(options.db);
    store::Database db(options.db, store::OpenMode::create);
    prepare_database(db, options, thresholds, log);
    const auto log_line = [&log](const std::string& message) { log.line(message); };
    const std::unique_ptr<exporter::Exporter> metrics = exporter::start_exporter(
        exporter_options, db, thresholds, driver, options.interval_us, log_line);
    store::Writer writer(db, store::RunInfo{hostname(), driver, options.source_name,
                                            options.interval_us, thresholds.active_util_pct,
                                            clock.wall_now(), thresholds.held_mib,
                                            thresholds.graphics_is_holder});
    std::optional<store::Retention> retention;
    retention.emplace(db, cfg.retention, thresholds);
    log_start(log, options, *source, driver, cards);
    // A card the database knows at an index that does not open now is recorded as lost.
    source->expect_devices(recorded_devices(db));
    GpuPresence gpus(lock, log, driver);
    gpus.see(cards, 0);
    // [mail] and [webhook.NAME] for policy notifications: a queue on its own thread.
    PolicyDelivery delivery(cfg, hostname(), log_line);
    if (metrics) {
        metrics->count_deliveries([&delivery] { return delivery.counts(); });
    }
    policy::PolicyRunner policy_runner(
        db, cfg.policy, thresholds, log_line,
        policy::RunnerOptions{"/proc", "/var/run/utmp", "/dev", hostname(),
                              static_cast<std::uint32_t>(getpid()), delivery.hook()});
    policy_runner.start(clock.wall_now());
    notify_service_manager("READY=1");
    // Startup (schema creation or conversion, configuration, NVML discovery) leaves freed heap
    // behind that the tick loop never needs again: give it back to the system.
    ::malloc_trim(0);

    identity::Resolver resolver = identity::Resolver::of_host();
    sampler::Sampler sampler(*source, clock, resolver, sampler_options_of(options, thresholds));
    StorageWatch storage(lock, log_line);
    // Its listeners run on their own threads; destroyed (stopped) before the source.
    FaultRecorder faults(*source, db, writer.run_id(), options.kernel_log, log);
    TickLoop loop{options, cfg,           flags,         log,       clock, db,    writer,
                  storage, metrics.get(), policy_runner, retention, gpus,  faults};
    sampler.run(
        flags.stop, [&](const telemetry::Tick& tick) { loop.on_tick(tick); },
        [&](DurationUs late) { loop.on_overrun(late); });
    notify_service_manager("STOPPING=1");
    faults.finish(metrics.get());
    return finish_run(options, db, writer, storage, log, sampler.ticks(), clock.wall_now());
}

} // namespace gua::daemon
