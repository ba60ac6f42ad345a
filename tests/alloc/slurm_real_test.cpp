// SPDX-License-Identifier: Apache-2.0
// A real Slurm (Debian's slurmctld and slurmd 22.05, munge) on loopback with 4 GPUs declared in
// gres.conf, the shipped prolog and epilog, and jobs submitted with sbatch: the mapping directory
// gets the right files at job start and loses them at job end, and MappingDirSource times the
// edges within a second; and `gua daemon --allocation-dir` over the fake driver records them, so
// that the store's reader and the audit give each card's allocated-unused and truly idle time and
// each job's window as the prolog and epilog timed them; and three jobs whose own processes the
// fake driver lists (one busy on 1 of its 2 cards, one holding memory idle, one never starting
// CUDA) get their per-job figures and four-state split within 1 pp of the integrated truth.
// Needs root and the packages
// (scripts/install-deps.sh --test); skips otherwise.
#include "alloc/mapping_source.hpp"
#include "audit/classify.hpp"
#include "store/reader.hpp"
#include "support/daemon_process.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <set>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <thread>
#include <unistd.h>

namespace gua::alloc {
namespace slurm_real_test {

namespace fs = std::filesystem;
constexpr int k_gpus = 4;

void write_file(const std::string& path, const std::string& text, fs::perms mode = {}) {
    std::ofstream(path, std::ios::trunc) << text;
    if (mode != fs::perms{}) {
        fs::permissions(path, mode);
    }
}

// A TCP port free on loopback right now.
int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    ::close(fd);
    return ntohs(address.sin_port);
}

TimeUs read_time(const std::string& path) {
    const std::string text = test::read_text(path);
    return text.empty() ? 0 : std::stoll(text) / 1000; // `date +%s%N`: nanoseconds
}

// A job's window as the wrappers stamped it. The shipped prolog writes the mapping somewhere
// between its wrapper's "start" and "done" stamps, the epilog removes it likewise; on a loaded
// machine these brackets widen to seconds, so the truth is a range: `narrow` opens when the
// prolog is done and closes when the epilog starts, `wide` opens when the prolog starts and
// closes when the epilog is done.
struct Window {
    std::pair<TimeUs, TimeUs> narrow, wide;
};

Window read_window(const std::string& dir, const std::string& job) {
    return {{read_time(dir + "/prolog-done." + job), read_time(dir + "/epilog-start." + job)},
            {read_time(dir + "/prolog-start." + job), read_time(dir + "/epilog-done." + job)}};
}

DurationUs overlap(TimeUs a0, TimeUs a1, TimeUs b0, TimeUs b1) {
    return std::max<DurationUs>(std::min(a1, b1) - std::max(a0, b0), 0);
}

// `got` within `tolerance` of the range the truth lies in, [min(a, b), max(a, b)].
::testing::AssertionResult within(double got, double a, double b, double tolerance) {
    const double lo = std::min(a, b) - tolerance;
    const double hi = std::max(a, b) + tolerance;
    if (got >= lo && got <= hi) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << got << " is outside [" << lo << ", " << hi << "]";
}

// The NVML index of Slurm's GPU `minor` on this fake host: the bus ids are numbered in reverse.
int nvml_index_of(int minor) {
    return k_gpus - 1 - minor;
}

// munged, slurmctld and slurmd started in `dir`, stopped (SIGTERM) on destruction.
class SlurmCluster {
  public:
    explicit SlurmCluster(const std::string& dir) : m_dir(dir) {}
    ~SlurmCluster() {
        for (const char* daemon : {"slurmd", "slurmctld", "munged"}) {
            const std::string pid = test::read_text(m_dir + "/" + daemon + ".pid");
            if (!pid.empty()) {
                ::kill(std::stoi(pid), SIGTERM);
            }
        }
    }
    SlurmCluster(const SlurmCluster&) = delete;
    SlurmCluster& operator=(const SlurmCluster&) = delete;

    std::map<std::string, std::string> env() const {
        return {{"SLURM_CONF", m_dir + "/slurm.conf"}};
    }

    // Writes the configuration and starts the daemons; an empty string on success, else why.
    std::string start(const std::string& prolog, const std::string& epilog);
    // sbatch's job id for `script` asking `gpus` GPUs.
    std::string submit(int gpus, const std::string& account, const std::string& script) const;
    // True once no job is left in the queue (at most `seconds`).
    bool wait_idle(int seconds) const;

  private:
    void write_config(const std::string& prolog, const std::string& epilog) const;
    std::string m_dir;
};

void SlurmCluster::write_config(const std::string& prolog, const std::string& epilog) const {
    const std::string d = m_dir;
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::ofstream conf(d + "/slurm.conf");
    conf << "ClusterName=guatest\nSlurmctldHost=" << host << "(127.0.0.1)\n"
         << "SlurmUser=root\nSlurmdUser=root\n"
         << "SlurmctldPort=" << free_port() << "\nSlurmdPort=" << free_port() << "\n"
         << "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=" << d << "/munge.sock\n"
         << "StateSaveLocation=" << d << "/state\nSlurmdSpoolDir=" << d << "/spool\n"
         << "SlurmctldPidFile=" << d << "/slurmctld.pid\nSlurmdPidFile=" << d << "/slurmd.pid\n"
         << "SlurmctldLogFile=" << d << "/slurmctld.log\nSlurmdLogFile=" << d << "/slurmd.log\n"
         << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nMpiDefault=none\n"
         << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nGresTypes=gpu\n"
         << "Prolog=" << prolog << "\nEpilog=" << epilog << "\nPrologFlags=Alloc\n"
         << "SchedulerType=sched/builtin\nReturnToService=2\nMinJobAge=2\nKillWait=2\n"
         << "AccountingStorageType=accounting_storage/none\nJobCompType=jobcomp/none\n"
         << "JobAcctGatherType=jobacct_gather/none\nInactiveLimit=0\n"
         << "NodeName=guanode NodeHostname=" << host
         << " NodeAddr=127.0.0.1 CPUs=1 RealMemory=100 Gres=gpu:" << k_gpus << "\n"
         << "PartitionName=gpu Nodes=guanode Default=YES MaxTime=INFINITE State=UP "
            "OverSubscribe=FORCE:4\n";
    write_file(d + "/gres.conf", "NodeName=guanode Name=gpu File=" + d + "/dev/nvidia[0-" +
                                     std::to_string(k_gpus - 1) + "]\n");
}

std::string SlurmCluster::start(const std::string& prolog, const std::string& epilog) {
    for (const char* sub : {"state", "spool", "dev"}) {
        fs::create_directories(m_dir + "/" + sub);
    }
    // slurmd only accepts GPU files that are device nodes: char devices with NVIDIA's major.
    for (int i = 0; i < k_gpus; ++i) {
        const std::string node = m_dir + "/dev/nvidia" + std::to_string(i);
        if (::mknod(node.c_str(), S_IFCHR | 0600, makedev(195, i)) != 0) {
            return "cannot create device nodes (mknod) in " + m_dir;
        }
    }
    write_config(prolog, epilog);
    write_file(m_dir + "/munge.key", std::string(1024, 'k'), fs::perms::owner_read);
    const test::RunResult munged =
        test::run("/usr/sbin/munged",
                  {"--force", "--socket=" + m_dir + "/munge.sock",
                   "--key-file=" + m_dir + "/munge.key", "--pid-file=" + m_dir + "/munged.pid",
                   "--log-file=" + m_dir + "/munged.log", "--seed-file=" + m_dir + "/munge.seed"});
    if (munged.exit_code != 0) {
        return "munged: " + munged.err;
    }
    const std::string conf = m_dir + "/slurm.conf";
    for (const auto& [daemon, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"/usr/sbin/slurmctld", {"-f", conf}},
             {"/usr/sbin/slurmd", {"-f", conf, "-N", "guanode"}}}) {
        if (const test::RunResult r = test::run(daemon, args); r.exit_code != 0) {
            return daemon + ": " + r.err;
        }
    }
    for (int i = 0; i < 100; ++i) { // until the node is idle, at most 20 s
        const test::RunResult r = test::run("/usr/bin/sinfo", {"-h", "-o", "%t"}, env());
        if (r.out.starts_with("idle")) {
            return {};
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return "the node never became idle: " + test::read_text(m_dir + "/slurmd.log");
}

std::string SlurmCluster::submit(int gpus, const std::string& account,
                                 const std::string& script) const {
    const test::RunResult r = test::run("/usr/bin/sbatch",
                                        {"--parsable", "--gres=gpu:" + std::to_string(gpus), "-A",
                                         account, "-o", m_dir + "/job-%j.out", "--wrap", script},
                                        env());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out.substr(0, r.out.find_first_of(";\n"));
}

bool SlurmCluster::wait_idle(int seconds) const {
    for (int i = 0; i < seconds * 5; ++i) {
        if (test::run("/usr/bin/squeue", {"-h"}, env()).out.empty()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
}

// Wrappers around the shipped scripts (slurm.conf's Prolog= takes no arguments): they set the
// mapping directory and the fake host's NVIDIA files, and stamp the time the script finished.
void write_wrappers(const std::string& dir) {
    const std::string shipped = std::string(GUA_SOURCE_DIR) + "/packaging/slurm/";
    for (const std::string name : {"prolog", "epilog"}) {
        write_file(dir + "/" + name,
                   "#!/bin/sh\nexport GUA_MAPPING_DIR=" + dir + "/map GUA_NVIDIA_PROC=" + dir +
                       "/proc GUA_NVIDIA_SMI=" + dir + "/nvidia-smi\ndate +%s%N > " + dir + "/" +
                       name + "-start.$SLURM_JOB_ID\n" + shipped + name + ".sh\ndate +%s%N > " +
                       dir + "/" + name + "-done.$SLURM_JOB_ID\n",
                   fs::perms::owner_all);
    }
    // Four cards whose bus ids run opposite to their minor numbers.
    std::string smi = "#!/bin/sh\n";
    for (int minor = 0; minor < k_gpus; ++minor) {
        const std::string bus = "0000:" + std::to_string(10 + minor) + ":00.0";
        fs::create_directories(dir + "/proc/" + bus);
        write_file(dir + "/proc/" + bus + "/information",
                   "Model: Fake\nDevice Minor: " + std::to_string(minor) + "\n");
        smi += "echo '" + std::to_string(nvml_index_of(minor)) + ", 0000" + bus + "'\n";
    }
    write_file(dir + "/nvidia-smi", smi, fs::perms::owner_all);
}

// A job's output once it printed its GPUs (at most 10 s).
std::string wait_output(const std::string& path) {
    for (int i = 0; i < 100; ++i) {
        if (std::string out = test::read_text(path); out.find('\n') != std::string::npos) {
            return out;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return test::read_text(path);
}

// The GPUs (Slurm's numbers) a job's output says it got.
std::vector<int> job_gpus(const std::string& output) {
    const std::size_t at = output.find("GPUS=");
    std::vector<int> gpus;
    std::string list = output.substr(at + 5, output.find('\n', at) - at - 5);
    for (std::size_t pos = 0; pos < list.size(); pos = list.find(',', pos) + 1) {
        gpus.push_back(std::stoi(list.substr(pos)));
        if (list.find(',', pos) == std::string::npos) {
            break;
        }
    }
    return gpus;
}

TEST(SlurmReal, PrologAndEpilogDriveTheMappingDirectory) {
    if (::geteuid() != 0 || !fs::exists("/usr/sbin/slurmctld") || !fs::exists("/usr/sbin/slurmd") ||
        !fs::exists("/usr/sbin/munged") || !fs::exists("/usr/bin/sbatch")) {
        GTEST_SKIP() << "needs root and Debian's slurmctld, slurmd, slurm-client and munge";
    }
    test::TempDir dir;
    fs::create_directories(dir.file("map"));
    write_wrappers(dir.path());
    SlurmCluster slurm(dir.path());
    const auto started = std::chrono::steady_clock::now();
    if (const std::string why = slurm.start(dir.file("prolog"), dir.file("epilog")); !why.empty()) {
        GTEST_SKIP() << why;
    }
    const double startup_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    RecordProperty("slurm_startup_ms", static_cast<int>(startup_s * 1000));
    MappingDirSource source(dir.file("map"));
    const TimeUs begin = wall_now();
    // Job "wide" asks 2 GPUs and holds them 3 s; job "narrow" asks 1 and holds it 1.5 s.
    const std::string script = "echo GPUS=$SLURM_JOB_GPUS; sleep ";
    const std::string wide = slurm.submit(2, "physics", script + "3");
    const std::string narrow = slurm.submit(1, "chemistry", script + "1.5");
    // Both jobs run now: their files name them, on the NVML indices of their Slurm GPUs.
    const std::string wide_out = wait_output(dir.file("job-" + wide + ".out"));
    const std::string narrow_out = wait_output(dir.file("job-" + narrow + ".out"));
    ASSERT_NE(wide_out.find("GPUS="), std::string::npos) << wide_out;
    ASSERT_NE(narrow_out.find("GPUS="), std::string::npos) << narrow_out;
    std::map<int, std::string> owner_of; // NVML index → job
    for (int gpu : job_gpus(wide_out)) {
        owner_of[nvml_index_of(gpu)] = wide;
    }
    for (int gpu : job_gpus(narrow_out)) {
        owner_of[nvml_index_of(gpu)] = narrow;
    }
    ASSERT_EQ(owner_of.size(), 3U);
    for (const auto& [index, job] : owner_of) {
        EXPECT_EQ(test::read_text(dir.file("map/" + std::to_string(index))), job + "\n");
    }
    EXPECT_EQ(test::read_text(dir.file("map/.gua-owners/" + wide)), "user=root\naccount=physics\n");
    ASSERT_TRUE(slurm.wait_idle(20));
    std::this_thread::sleep_for(std::chrono::milliseconds(300)); // the last epilog's stamp
    const TimeUs end = wall_now();
    for (const auto& entry : fs::directory_iterator(dir.file("map"))) {
        EXPECT_TRUE(entry.path().filename().string().starts_with("."))
            << entry.path() << " left behind";
    }
    EXPECT_TRUE(fs::is_empty(dir.file("map/.gua-owners")));
    // The source's edges: within a second of the prolog's and the epilog's brackets.
    for (int index = 0; index < k_gpus; ++index) {
        CardQuery card;
        card.index = static_cast<unsigned>(index);
        const std::vector<Segment> got = source.query(card, begin, end);
        if (!owner_of.contains(index)) {
            EXPECT_EQ(got.size(), 1U);
            EXPECT_EQ(got.at(0).state, AllocationState::unallocated);
            continue;
        }
        const std::string& job = owner_of[index];
        ASSERT_EQ(got.size(), 3U) << "card " << index;
        EXPECT_EQ(got[1].state, AllocationState::allocated);
        ASSERT_EQ(got[1].allocations.size(), 1U);
        EXPECT_EQ(got[1].allocations[0].id, job);
        EXPECT_EQ(got[1].allocations[0].user, "root");
        EXPECT_EQ(got[1].allocations[0].account, job == wide ? "physics" : "chemistry");
        const Window w = read_window(dir.path(), job);
        EXPECT_TRUE(within(static_cast<double>(got[1].begin), static_cast<double>(w.wide.first),
                           static_cast<double>(w.narrow.first), k_us_per_second));
        EXPECT_TRUE(within(static_cast<double>(got[1].end), static_cast<double>(w.narrow.second),
                           static_cast<double>(w.wide.second), k_us_per_second));
        EXPECT_EQ(got[2].state, AllocationState::unallocated);
    }
}

// Two jobs that allocate GPUs and never start CUDA, recorded by the real daemon over four idle
// fake cards: read back through store::Reader and audit::classify, each allocated card's
// allocated-unused time is its job's window (prolog done → epilog done) within the card's
// recorded time, the rest truly idle, each within 1 pp; the jobs' rows carry their windows.
TEST(SlurmReal, JobsThatNeverStartCudaAreAllocatedUnusedThroughTheStore) {
    if (::geteuid() != 0 || !fs::exists("/usr/sbin/slurmctld") || !fs::exists("/usr/sbin/slurmd") ||
        !fs::exists("/usr/sbin/munged") || !fs::exists("/usr/bin/sbatch")) {
        GTEST_SKIP() << "needs root and Debian's slurmctld, slurmd, slurm-client and munge";
    }
    test::TempDir dir;
    fs::create_directories(dir.file("map"));
    write_wrappers(dir.path());
    SlurmCluster slurm(dir.path());
    if (const std::string why = slurm.start(dir.file("prolog"), dir.file("epilog")); !why.empty()) {
        GTEST_SKIP() << why;
    }
    std::string devices;
    for (int i = 0; i < k_gpus; ++i) {
        devices += std::string(i == 0 ? "" : ",") + "{\"util\": [[0, 0]]}";
    }
    write_file(dir.file("scenario.json"), "{\"devices\": [" + devices + "], \"processes\": []}");
    write_file(dir.file("gua.toml"), "");
    auto daemon = test::start_gua(
        {"daemon", "--db", dir.file("gua.db"), "--config", dir.file("gua.toml"), "--nvml-library",
         std::string(GUA_FAKE_NVML_DIR) + "/libnvidia-ml.so.1", "--interval", "500ms", "--ticks",
         "24", "--quiet", "--allocation-dir", dir.file("map")},
        {{"GUA_FAKE_NVML_SCENARIO", dir.file("scenario.json")},
         {"GUA_FAKE_NVML_CLOCK_FILE", ""},
         {"GUA_NVML_LIBRARY", ""}},
        dir.path(), "daemon");
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    const std::string script = "echo GPUS=$SLURM_JOB_GPUS; sleep ";
    const std::string wide = slurm.submit(2, "physics", script + "3");
    const std::string narrow = slurm.submit(1, "chemistry", script + "1.5");
    const std::string wide_out = wait_output(dir.file("job-" + wide + ".out"));
    const std::string narrow_out = wait_output(dir.file("job-" + narrow + ".out"));
    ASSERT_NE(wide_out.find("GPUS="), std::string::npos) << wide_out;
    ASSERT_NE(narrow_out.find("GPUS="), std::string::npos) << narrow_out;
    std::map<int, std::string> owner_of; // NVML index → job
    for (int gpu : job_gpus(wide_out)) {
        owner_of[nvml_index_of(gpu)] = wide;
    }
    for (int gpu : job_gpus(narrow_out)) {
        owner_of[nvml_index_of(gpu)] = narrow;
    }
    ASSERT_TRUE(slurm.wait_idle(20));
    ASSERT_EQ(daemon->wait_exit(std::chrono::seconds(40)), std::optional<int>(0)) << daemon->err();

    // Ground truth per job: the window its prolog and epilog stamped, narrow and wide.
    std::map<std::string, Window> window;
    for (const std::string& job : {wide, narrow}) {
        window[job] = read_window(dir.path(), job);
    }
    store::Database db(dir.file("gua.db"), store::OpenMode::read_only);
    store::Reader reader(db);
    std::map<std::int64_t, int> index_of; // gpu id → NVML index
    for (const store::GpuRow& g : reader.gpus()) {
        index_of[g.id] = g.index;
    }
    struct Card {
        DurationUs recorded = 0;
        DurationUs truth_narrow = 0, truth_wide = 0; // allocated, by the two windows
        audit::StateTimes states;
    };
    std::map<int, Card> cards;
    reader.scan(store::k_time_min, store::k_time_max, [&](const audit::CardTick& t) {
        Card& c = cards[index_of.at(t.gpu)];
        c.recorded += t.duration_us;
        c.states += audit::classify(t, audit::Thresholds{});
        if (owner_of.contains(index_of.at(t.gpu))) {
            const Window& w = window.at(owner_of.at(index_of.at(t.gpu)));
            const TimeUs t1 = t.t0 + t.duration_us;
            c.truth_narrow += overlap(t.t0, t1, w.narrow.first, w.narrow.second);
            c.truth_wide += overlap(t.t0, t1, w.wide.first, w.wide.second);
        }
    });
    ASSERT_EQ(cards.size(), static_cast<std::size_t>(k_gpus));
    for (const auto& [index, c] : cards) {
        const double pp = 100.0 / static_cast<double>(c.recorded);
        EXPECT_GT(c.recorded, 10 * k_us_per_second) << "card " << index;
        EXPECT_EQ(c.states.active + c.states.idle_held, 0) << "card " << index;
        EXPECT_TRUE(within(static_cast<double>(c.states.allocated_unused) * pp,
                           static_cast<double>(c.truth_narrow) * pp,
                           static_cast<double>(c.truth_wide) * pp, 1.0))
            << "card " << index;
        EXPECT_TRUE(within(static_cast<double>(c.states.truly_idle + c.states.unmeasured) * pp,
                           static_cast<double>(c.recorded - c.truth_narrow) * pp,
                           static_cast<double>(c.recorded - c.truth_wide) * pp, 1.0))
            << "card " << index;
        EXPECT_EQ(c.truth_narrow > 0, owner_of.contains(index)) << "card " << index;
    }
    // The jobs as the reader lists them: kind, id, owner, account, window within a second.
    const std::vector<audit::AllocationRow> rows =
        reader.allocations(store::k_time_min, store::k_time_max);
    ASSERT_EQ(rows.size(), 2U);
    for (const audit::AllocationRow& row : rows) {
        ASSERT_TRUE(window.contains(row.id)) << row.id;
        EXPECT_EQ(row.kind, "slurm-job");
        EXPECT_EQ(row.user, "root");
        EXPECT_EQ(row.account, row.id == wide ? "physics" : "chemistry");
        const Window& w = window[row.id];
        EXPECT_TRUE(within(static_cast<double>(row.first_us), static_cast<double>(w.wide.first),
                           static_cast<double>(w.narrow.first), k_us_per_second))
            << row.id;
        EXPECT_TRUE(within(static_cast<double>(row.last_us), static_cast<double>(w.narrow.second),
                           static_cast<double>(w.wide.second), k_us_per_second))
            << row.id;
    }
}

// Ground truth of one card over the recording: each state's time, integrated tick by tick from
// the stamped edges (the job's window, the job's process exiting).
struct TruthCard {
    DurationUs recorded = 0;
    DurationUs active = 0, idle_held = 0, allocated_unused = 0, truly_idle = 0;
};

// One tick the daemon recorded: the card's NVML index and the tick's span.
struct Span {
    int index = 0;
    TimeUs t0 = 0, t1 = 0;
};

// Who had which card: the job owning each card, the card the busy process ran on, the card
// held idle and when its holder exited.
struct Layout {
    std::map<int, std::string> owner_of;
    int busy = -1, held = -1;
    TimeUs holder_exit = 0;
};

struct Truth {
    std::map<int, TruthCard> cards;
    std::map<std::string, std::map<int, TruthCard>> jobs; // job → card → its part there
};

// The truth over `spans` with each job's window taken as `window_of(job)`.
template <typename WindowOf>
Truth integrate(const std::vector<Span>& spans, const Layout& layout, WindowOf window_of) {
    Truth truth;
    for (const Span& t : spans) {
        const DurationUs length = t.t1 - t.t0;
        TruthCard& c = truth.cards[t.index];
        c.recorded += length;
        const auto owner = layout.owner_of.find(t.index);
        DurationUs in_job = 0;
        if (owner != layout.owner_of.end()) {
            const auto [from, to] = window_of(owner->second);
            in_job = overlap(t.t0, t.t1, from, to);
        }
        const DurationUs holding =
            t.index == layout.held ? overlap(t.t0, t.t1, 0, layout.holder_exit) : 0;
        TruthCard part;
        part.recorded = in_job;
        if (t.index == layout.busy) {
            c.active += length;
            part.active = in_job;
        } else {
            c.idle_held += holding;
            part.idle_held = std::min(holding, in_job);
            part.allocated_unused = in_job - part.idle_held;
            c.allocated_unused += part.allocated_unused;
            c.truly_idle += length - holding - part.allocated_unused;
        }
        if (owner != layout.owner_of.end()) {
            TruthCard& j = truth.jobs[owner->second][t.index];
            j.recorded += part.recorded;
            j.active += part.active;
            j.idle_held += part.idle_held;
            j.allocated_unused += part.allocated_unused;
        }
    }
    return truth;
}

double hours_us(const nlohmann::json& v) {
    return v.get<double>() * 3.6e9;
}

// Three jobs under a real Slurm, recorded by the daemon over the fake driver listing the jobs'
// own processes on their cards: "used" asks 2 GPUs and runs a busy process on one; "holder" asks
// 1 and holds 6000 MiB on it idle; "never" asks 1 and never starts CUDA. `gua job` for each, and
// each card's four states in `gua report`, against the truth integrated from the stamped edges:
// within 1 pp of each job's allocated time and of each card's recorded time.
TEST(SlurmReal, ThreeJobsPerJobFiguresAndTheFourStatesMatchTheTruth) {
    if (::geteuid() != 0 || !fs::exists("/usr/sbin/slurmctld") || !fs::exists("/usr/sbin/slurmd") ||
        !fs::exists("/usr/sbin/munged") || !fs::exists("/usr/bin/sbatch")) {
        GTEST_SKIP() << "needs root and Debian's slurmctld, slurmd, slurm-client and munge";
    }
    test::TempDir dir;
    fs::create_directories(dir.file("map"));
    write_wrappers(dir.path());
    SlurmCluster slurm(dir.path());
    if (const std::string why = slurm.start(dir.file("prolog"), dir.file("epilog")); !why.empty()) {
        GTEST_SKIP() << why;
    }
    // Each job's shell is the process the fake driver lists: it stamps its pid, sleeps, stamps
    // the time just before it exits. The daemon polls every 100 ms, so that the holder's exit,
    // which gua sees at the next poll, is timed well within 1 pp of the jobs' ~17 s recorded.
    const std::string script = "echo GPUS=$SLURM_JOB_GPUS; echo $$ > " + dir.path() +
                               "/pid.$SLURM_JOB_ID; sleep 20; date +%s%N > " + dir.path() +
                               "/exited.$SLURM_JOB_ID";
    const std::string used = slurm.submit(2, "physics", script);
    const std::string holder = slurm.submit(1, "physics", script);
    const std::string never = slurm.submit(1, "chemistry", script);
    std::map<std::string, std::vector<int>> cards_of; // job → NVML indices
    for (const std::string& job : {used, holder, never}) {
        const std::string out = wait_output(dir.file("job-" + job + ".out"));
        ASSERT_NE(out.find("GPUS="), std::string::npos) << out;
        for (int gpu : job_gpus(out)) {
            cards_of[job].push_back(nvml_index_of(gpu));
        }
        for (int i = 0; i < 50 && test::read_text(dir.file("pid." + job)).empty(); ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    ASSERT_EQ(cards_of[used].size(), 2U);
    const int busy = cards_of[used][0];
    const int held = cards_of[holder].at(0);
    const auto pid = [&](const std::string& job) {
        return std::stoi(test::read_text(dir.file("pid." + job)));
    };
    nlohmann::json devices = nlohmann::json::array();
    for (int i = 0; i < k_gpus; ++i) {
        // 50 samples a second, so that each 100 ms poll has its own (the default sixth of a
        // second would leave polls without a new sample unmeasured).
        devices.push_back(
            {{"util", {{0, i == busy ? 100 : 0}}}, {"util_period_s", 0.02}, {"ring_size", 500}});
    }
    nlohmann::json processes = {{{"device", busy},
                                 {"pid", pid(used)},
                                 {"memory_mib", {{0, 4000}}},
                                 {"sm_util", {{0, 100}}},
                                 {"until_exit", true}},
                                {{"device", held},
                                 {"pid", pid(holder)},
                                 {"memory_mib", {{0, 6000}}},
                                 {"sm_util", {{0, 0}}},
                                 {"until_exit", true}}};
    write_file(dir.file("scenario.json"),
               nlohmann::json{{"devices", devices}, {"processes", processes}}.dump());
    write_file(dir.file("gua.toml"), "");
    auto daemon = test::start_gua(
        {"daemon", "--db", dir.file("gua.db"), "--config", dir.file("gua.toml"), "--nvml-library",
         std::string(GUA_FAKE_NVML_DIR) + "/libnvidia-ml.so.1", "--interval", "100ms", "--ticks",
         "300", "--quiet", "--allocation-dir", dir.file("map")},
        {{"GUA_FAKE_NVML_SCENARIO", dir.file("scenario.json")},
         {"GUA_FAKE_NVML_CLOCK_FILE", ""},
         {"GUA_NVML_LIBRARY", ""}},
        dir.path(), "daemon");
    ASSERT_TRUE(slurm.wait_idle(30));
    ASSERT_EQ(daemon->wait_exit(std::chrono::seconds(60)), std::optional<int>(0)) << daemon->err();

    // The truth, tick by tick over what the daemon recorded, for the narrow and wide windows.
    std::map<std::string, Window> window;
    for (const std::string& job : {used, holder, never}) {
        window[job] = read_window(dir.path(), job);
    }
    Layout layout{{}, busy, held, read_time(dir.file("exited." + holder))};
    for (const auto& [job, cards] : cards_of) {
        for (int c : cards) {
            layout.owner_of[c] = job;
        }
    }
    std::vector<Span> spans;
    {
        store::Database db(dir.file("gua.db"), store::OpenMode::read_only);
        store::Reader reader(db);
        std::map<std::int64_t, int> index_of;
        for (const store::GpuRow& g : reader.gpus()) {
            index_of[g.id] = g.index;
        }
        reader.scan(store::k_time_min, store::k_time_max, [&](const audit::CardTick& t) {
            spans.push_back({index_of.at(t.gpu), t.t0, t.t0 + t.duration_us});
        });
    }
    DurationUs bracket = 0; // the widest gap between an epilog's two stamps, for the record
    for (const auto& [job, w] : window) {
        bracket = std::max(bracket, w.wide.second - w.narrow.second);
    }
    RecordProperty("epilog_bracket_ms", static_cast<int>(bracket / k_us_per_ms));
    const Truth narrow =
        integrate(spans, layout, [&](const std::string& job) { return window[job].narrow; });
    const Truth wide =
        integrate(spans, layout, [&](const std::string& job) { return window[job].wide; });
    ASSERT_EQ(wide.cards.size(), static_cast<std::size_t>(k_gpus));

    // The four states per card in `gua report`: each within 1 pp of the range the two windows
    // give (the busy card's and the held card's idle-held time do not depend on the windows).
    const test::RunResult rep =
        test::run_gua({"report", "--db", dir.file("gua.db"), "--format", "json"});
    ASSERT_EQ(rep.exit_code, 0) << rep.err;
    const nlohmann::json report = nlohmann::json::parse(rep.out); // outlives the loop
    for (const nlohmann::json& g : report["gpus"]) {
        const TruthCard& n = narrow.cards.at(g["index"].get<int>());
        const TruthCard& w = wide.cards.at(g["index"].get<int>());
        const nlohmann::json& s = g["states"];
        const double pp = 100.0 / static_cast<double>(w.recorded);
        const auto pct = [&](DurationUs d) { return static_cast<double>(d) * pp; };
        EXPECT_GT(w.recorded, 15 * k_us_per_second);
        EXPECT_TRUE(within(hours_us(s["active_gpu_hours"]) * pp, pct(n.active), pct(w.active), 1.0))
            << g.dump();
        EXPECT_TRUE(within(hours_us(s["idle_held_gpu_hours"]) * pp, pct(n.idle_held),
                           pct(w.idle_held), 1.0))
            << g.dump();
        EXPECT_TRUE(within(hours_us(s["allocated_unused_gpu_hours"]) * pp, pct(n.allocated_unused),
                           pct(w.allocated_unused), 1.0))
            << g.dump();
        EXPECT_TRUE(
            within((hours_us(s["truly_idle_gpu_hours"]) + hours_us(s["unmeasured_gpu_hours"])) * pp,
                   pct(n.truly_idle), pct(w.truly_idle), 1.0))
            << g.dump();
    }
    // Each job in `gua job`: per card and state within 1 pp of its allocated time there.
    for (const std::string& job : {used, holder, never}) {
        const test::RunResult r =
            test::run_gua({"job", job, "--db", dir.file("gua.db"), "--format", "json"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const nlohmann::json j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["job"]["gpus_allocated"], cards_of[job].size()) << job;
        EXPECT_EQ(j["job"]["gpus_used"], job == used ? 1 : 0) << job;
        for (const nlohmann::json& g : j["gpus"]) {
            const TruthCard& n = narrow.jobs.at(job).at(g["index"].get<int>());
            const TruthCard& w = wide.jobs.at(job).at(g["index"].get<int>());
            const double pp = 100.0 / static_cast<double>(w.recorded);
            const auto pct = [&](DurationUs d) { return static_cast<double>(d) * pp; };
            EXPECT_GT(n.recorded, 5 * k_us_per_second) << job;
            EXPECT_TRUE(
                within(hours_us(g["allocated_gpu_hours"]) * pp, pct(n.recorded), 100.0, 1.0))
                << job << g.dump();
            EXPECT_TRUE(
                within(hours_us(g["active_gpu_hours"]) * pp, pct(n.active), pct(w.active), 1.0))
                << g.dump();
            EXPECT_TRUE(within(hours_us(g["idle_held_gpu_hours"]) * pp, pct(n.idle_held),
                               pct(w.idle_held), 1.0))
                << g.dump();
            EXPECT_TRUE(within(hours_us(g["allocated_unused_gpu_hours"]) * pp,
                               pct(n.allocated_unused), pct(w.allocated_unused), 1.0))
                << job << g.dump();
        }
        const std::vector<std::string> notes = j["notes"];
        if (job == used) {
            ASSERT_FALSE(notes.empty());
            EXPECT_EQ(notes[0], "used 1 of 2 allocated GPUs: ask for 1 (--gres=gpu:1)");
        }
    }
    // `--group-by job` lists the three with the same figures as `gua job`.
    const test::RunResult by = test::run_gua(
        {"report", "--db", dir.file("gua.db"), "--group-by", "job", "--format", "json"});
    ASSERT_EQ(by.exit_code, 0) << by.err;
    EXPECT_EQ(nlohmann::json::parse(by.out)["jobs"]["total"], 3);
}

} // namespace slurm_real_test
} // namespace gua::alloc
