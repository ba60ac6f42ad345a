// SPDX-License-Identifier: Apache-2.0
// Tick blocks: the raw storage of card-ticks. A block holds consecutive ticks of one run within one
// UTC hour with the same cards and processes; per-tick values live in code-point streams.
#pragma once

#include "core/time.hpp"
#include "store/codec.hpp"
#include "telemetry/card_fields.hpp"
#include "telemetry/model.hpp"
#include "telemetry/tick.hpp"

#include <algorithm>
#include <array>
#include <bitset>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gua::store {

/// The value streams of a block that are not per-card fields. Each stream has a frozen number (its
/// index in BlockRow::streams) and a column of its own (docs/schema.md lists their meaning); new
/// streams get new numbers and columns, and a column a block was written without reads as the
/// stream's absent value. The per-card fields of telemetry/card_fields.def are streams too, with
/// the numbers the table gives them (6–11, then from 19 on), one value per card-tick.
enum class Stream : std::size_t {
    t0_delta = 0,      ///< per tick: zigzag(t0 − end of the previous tick)
    dur_delta = 1,     ///< per tick: zigzag(duration − tick_us)
    util_source = 2,   ///< per card-tick: telemetry::UtilSource
    util_cpct = 3,     ///< per card-tick: mean SM utilization, 0.01 %
    shape = 4,         ///< per card-tick: active/bucket pattern (see shape_us)
    shape_us = 5,      ///< values of the card-ticks whose shape is partial (3) or explicit (5)
    read_errors = 12,  ///< per card-tick
    proc_mem_mib = 13, ///< per process-tick
    proc_sm_cpct = 14, ///< per process-tick: SM utilization in 0.01 %
    // Schema 4.
    unmeasured_us = 15,    ///< per card-tick; absent: 0
    idle_unlisted_us = 16, ///< per card-tick: zigzag(value − idle_unlisted_default()); absent: 0
    idle_unknown_us = 17,  ///< per card-tick; absent: 0
    proc_active_us = 18, ///< per process-tick: zigzag(value − proc_active_default()); absent: NULL
    // Schema 11.
    /// per process-tick: zigzag(value − proc_idle_held_default()); NULL for non-holders;
    /// absent: NULL
    proc_idle_held_us = 44,
    // Schema 13.
    alloc_shape = 45, ///< per card-tick: the allocation crossing's code (k_alloc_*); absent: 0
    alloc_us = 46,    ///< six values per card-tick whose alloc_shape is k_alloc_explicit
};

namespace detail {
struct StreamName {
    Stream stream;
    std::string_view column;
};
inline constexpr std::array<StreamName, 16> k_structural_streams{{
    {Stream::t0_delta, "t0_delta"},
    {Stream::dur_delta, "dur_delta"},
    {Stream::util_source, "util_source"},
    {Stream::util_cpct, "util_cpct"},
    {Stream::shape, "shape"},
    {Stream::shape_us, "shape_us"},
    {Stream::read_errors, "read_errors"},
    {Stream::proc_mem_mib, "proc_mem_mib"},
    {Stream::proc_sm_cpct, "proc_sm_cpct"},
    {Stream::unmeasured_us, "unmeasured_us"},
    {Stream::idle_unlisted_us, "idle_unlisted_us"},
    {Stream::idle_unknown_us, "idle_unknown_us"},
    {Stream::proc_active_us, "proc_active_us"},
    {Stream::proc_idle_held_us, "proc_idle_held_us"},
    {Stream::alloc_shape, "alloc_shape"},
    {Stream::alloc_us, "alloc_us"},
}};
constexpr std::size_t stream_count() {
    std::size_t n = k_structural_streams.size() + telemetry::k_card_field_count;
    for (const StreamName& s : k_structural_streams) {
        n = std::max(n, static_cast<std::size_t>(s.stream) + 1);
    }
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        n = std::max(n, f.stream + 1);
    }
    return n;
}
} // namespace detail

/// Number of streams (their numbers are 0 to k_stream_count − 1, each used once).
inline constexpr std::size_t k_stream_count = detail::stream_count();

namespace detail {
constexpr std::array<std::string_view, k_stream_count> stream_columns() {
    std::array<std::string_view, k_stream_count> columns{};
    for (const StreamName& s : k_structural_streams) {
        columns[static_cast<std::size_t>(s.stream)] = s.column;
    }
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        columns[f.stream] = f.column;
    }
    return columns;
}
constexpr bool streams_dense() {
    std::array<int, k_stream_count> uses{};
    for (const StreamName& s : k_structural_streams) {
        ++uses[static_cast<std::size_t>(s.stream)];
    }
    for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
        ++uses[f.stream];
    }
    for (int u : uses) {
        if (u != 1) {
            return false;
        }
    }
    return true;
}
} // namespace detail

static_assert(detail::streams_dense(), "every stream number is used exactly once");

/// Column names of the streams, by stream number.
inline constexpr std::array<std::string_view, k_stream_count> k_stream_columns =
    detail::stream_columns();

/// The stream number of a per-card field.
constexpr std::size_t stream_of(telemetry::CardField field) {
    return telemetry::info(field).stream;
}

/// The most ticks a block holds: an hour at the daemon's shortest interval (100 ms). The writer
/// closes a block there; the decoder rejects a block that claims more before allocating.
inline constexpr std::int64_t k_max_block_ticks = 36000;
/// The most card slots a block may have (NVML shows at most 64 GPUs, each at most 7 MIG
/// instances); the decoder rejects a block that claims more.
inline constexpr std::size_t k_max_block_cards = 512;

/// The default that stream idle_unlisted_us is stored relative to: a card slot with no process
/// listed in the block has all its measured non-active time, except idle_unknown_us, idle with no
/// holder listed; others 0.
DurationUs idle_unlisted_default(bool slot_has_processes, std::optional<DurationUs> active_us,
                                 DurationUs measured_us, DurationUs idle_unknown_us);

/// The default that stream proc_active_us is stored relative to: the card's active time split by
/// the stored SM shares (0.01 %) of the card slot's processes, rounded down; 0 when the card's
/// active time or the process's reading is unknown or the slot's shares sum to 0.
DurationUs proc_active_default(std::optional<DurationUs> card_active_us,
                               std::optional<std::uint64_t> sm_cpct, std::uint64_t slot_sm_cpct);

/// The default that stream proc_idle_held_us is stored relative to: the card's idle-held time
/// (measured − active − idle_unknown − idle_unlisted) split by the stored memory of the process
/// over the sum of the stored memory of the card slot's processes, rounded down; 0 when a factor
/// is unknown, the sum is 0 or above 2²⁴ MiB, or the idle-held time above 2⁴⁰ µs.
DurationUs proc_idle_held_default(DurationUs card_held_us, std::optional<std::uint64_t> mem_mib,
                                  std::uint64_t slot_mem_mib);

/// A stored card-tick's idle-held time: measured − active − idle_unknown − idle_unlisted (0 when
/// negative or its utilization was not measured).
DurationUs card_held_of(std::optional<DurationUs> active_us, DurationUs measured_us,
                        DurationUs idle_unknown_us, DurationUs idle_unlisted_us);

/// The field that StoredBase::energy multiplies by the tick's duration, and the one that
/// StoredBase::clock_event reads its bit from.
inline constexpr telemetry::CardField k_power_field = telemetry::k_power_field;
inline constexpr telemetry::CardField k_events_field = telemetry::k_clock_events_field;

/// `value` in whole quanta (rounded half away from zero).
std::int64_t quantised(std::int64_t value, std::int64_t quantum);

/// What a per-card field with `base` is stored relative to, in stored units, given the stored
/// (quantised) power and clocks-event values of its card-tick (codec::k_null when unknown): the
/// energy of the power over the tick (power × duration, rounded), or the tick's duration when the
/// clocks-event bit is set; 0 otherwise and for values out of bounds (as in the views' SQL).
std::int64_t stored_base(telemetry::StoredBase base, std::uint64_t base_bit,
                         std::uint64_t power_stored, std::uint64_t events_stored,
                         DurationUs duration_us);

/// The stream value of field `f` of a card-tick with `readings` lasting `duration_us`.
std::uint64_t stored_value(const telemetry::CardFieldInfo& f,
                           const telemetry::CardReadings& readings, DurationUs duration_us);

/// Shape code of a card-tick whose buckets 0–2 are listed in shape_us, active time being the
/// rest of bucket 0 and bucket 3 the rest of the tick (the sampler's usual partial tick).
inline constexpr std::uint64_t k_shape_partial = 8;
/// Shape code of a card-tick whose active and four bucket times are all listed in shape_us.
inline constexpr std::uint64_t k_shape_explicit = 9;

/// Codes of stream alloc_shape: no allocation source said anything (all zero); allocated the
/// whole tick, the crossing equal to the card-tick's own states (allocation_whole()); unknown
/// the whole tick, likewise; or the six times listed in alloc_us (allocated, active, idle-held,
/// unused, unknown, unknown idle).
inline constexpr std::uint64_t k_alloc_none = 0;
inline constexpr std::uint64_t k_alloc_allocated = 1;
inline constexpr std::uint64_t k_alloc_unknown = 2;
inline constexpr std::uint64_t k_alloc_explicit = 3;

/// The allocation crossing of a card-tick allocated (else unknown) for all its `duration_us`:
/// allocated (unknown) time the duration; active, idle-held and unused (unknown idle) time the
/// card-tick's own active, idle-held and idle-unlisted time.
telemetry::AllocationTimes allocation_whole(bool allocated, DurationUs duration_us,
                                            std::optional<DurationUs> active_us,
                                            DurationUs measured_us, DurationUs idle_unknown_us,
                                            DurationUs idle_unlisted_us);

/// Values per tick of stream number `s` in a block with `cards` card and `procs` process slots.
std::size_t period_of(std::size_t s, std::size_t cards, std::size_t procs);

/// One tick_block row.
struct BlockRow {
    std::int64_t id = 0;
    TimeUs t0_us = 0;  ///< start of the first tick
    TimeUs end_us = 0; ///< latest end of its ticks
    std::int64_t run_id = 0;
    std::int64_t n_ticks = 0;
    DurationUs tick_us = 0; ///< duration of the first tick
    std::string cards;      ///< JSON array of gpu ids in slot order
    std::string procs;      ///< JSON array of [slot, process id, type]
    std::array<std::string, k_stream_count> streams;
};

/// Which cards and processes a tick has, as store ids: blocks only hold ticks of one layout.
struct BlockLayout {
    std::vector<std::int64_t> gpus; ///< gpu id per card slot, in the tick's card order
    struct Proc {
        std::int64_t slot = 0;
        std::int64_t process_id = 0;
        std::int64_t type = 0;
        friend bool operator==(const Proc&, const Proc&) = default;
    };
    std::vector<Proc> procs; ///< in the tick's card order, then process order
    friend bool operator==(const BlockLayout&, const BlockLayout&) = default;
};

/// Floor of `t` to its UTC hour, as an hour number since the epoch.
std::int64_t hour_of(TimeUs t);

/// Builds a writer's open block tick by tick. Quantisation (whole percent, whole watts, 0.01 %
/// per-process SM) happens here; everything else is stored exactly.
class BlockBuilder {
  public:
    /// Blocks are closed when their encoded size reaches this, so that a closed block fills
    /// most of a 4 kB page (SQLite keeps a row of up to 4,061 bytes on its leaf page, and the
    /// last tick may add a few hundred bytes more): every block repeats its layout and its
    /// constant streams, so fewer, longer blocks store less (at 1,800 bytes, two blocks to a page,
    /// the reference year took 6 % more: docs/PERFORMANCE.md). A block whose layout alone takes
    /// more than half of it (many processes) may hold this much of streams besides its layout
    /// instead: it then takes more than a page, but stores its layout once for many ticks rather
    /// than once for every one or two.
    static constexpr std::size_t k_max_bytes = 3600;

    bool empty() const { return m_row.n_ticks == 0; }
    /// True when a tick with `layout` starting at `t0` may extend the open block.
    bool fits(const BlockLayout& layout, TimeUs t0) const;
    /// Starts a new block (id 0) of run `run_id` holding `tick`, whose cards and processes are
    /// described by `layout`.
    void start(std::int64_t run_id, const BlockLayout& layout, const telemetry::Tick& tick);
    /// Appends `tick`; fits() must have been true.
    void append(const telemetry::Tick& tick);
    /// The row as it must be stored now, except for its streams (see stream()).
    const BlockRow& row() const { return m_row; }
    /// The encoded stream `s` as it must be stored now; empty when it has no values, and
    /// alloc_shape empty while every card-tick of the block is without allocation (k_alloc_none),
    /// so that a host without allocation sources stores nothing for them.
    const std::string& stream(std::size_t s) const;
    /// Records the rowid the block got when inserted.
    void set_id(std::int64_t id) { m_row.id = id; }

  private:
    void encode(const telemetry::Tick& tick);
    void encode_fields(const telemetry::CardReadings& readings, DurationUs duration_us);
    void encode_allocation(const telemetry::CardTickRecord& c, DurationUs duration_us,
                           DurationUs measured_us, DurationUs idle_unknown_us);

    BlockRow m_row;
    BlockLayout m_layout;
    std::int64_t m_hour = 0;
    TimeUs m_last_end = 0;
    bool m_any_allocation = false; ///< a card-tick of the block has alloc_shape ≠ k_alloc_none
    std::array<codec::StreamWriter, k_stream_count> m_streams;
};

/// One process of a stored card-tick.
struct StoredProc {
    std::int64_t process_id = 0;
    telemetry::ProcessType type = telemetry::ProcessType::compute;
    std::optional<std::int64_t> mem_used_mib;
    std::optional<double> sm_util_pct;
    std::optional<DurationUs> active_us;    ///< see telemetry::ProcessTick
    std::optional<DurationUs> idle_held_us; ///< see telemetry::ProcessTick
};

/// One card-tick as stored, every recorded field; its processes are
/// `procs[proc_begin, proc_begin + proc_count)` of the DecodedTicks it belongs to.
struct StoredCardTick {
    TimeUs t0 = 0;
    DurationUs duration_us = 0;
    std::int64_t gpu_id = 0;
    std::int64_t run_id = 0;
    telemetry::UtilSource util_source = telemetry::UtilSource::none;
    std::optional<double> util_pct;
    std::optional<DurationUs> active_us;
    std::array<DurationUs, 4> bucket_us{};
    DurationUs unmeasured_us = 0;          ///< see telemetry::CardTickRecord
    DurationUs idle_unlisted_us = 0;       ///< see telemetry::CardTickRecord
    DurationUs idle_unknown_us = 0;        ///< see telemetry::CardTickRecord
    telemetry::CardReadings readings;      ///< per-card fields, as quantised when stored
    telemetry::AllocationTimes allocation; ///< see telemetry::CardTickRecord
    std::int64_t read_errors = 0;
    std::uint32_t proc_begin = 0;
    std::uint32_t proc_count = 0;
};

/// Card-ticks decoded from blocks.
struct DecodedTicks {
    std::vector<StoredCardTick> ticks;
    std::vector<StoredProc> procs;
    void clear() {
        ticks.clear();
        procs.clear();
    }
};

/// Which per-card fields (card_fields.def) a decoder fills in; the others are left unknown.
using CardFieldSet = std::bitset<telemetry::k_card_fields.size()>;

/// Every per-card field.
inline CardFieldSet all_card_fields() {
    return CardFieldSet{}.set();
}

/// The per-card fields `fields`.
CardFieldSet card_field_set(std::initializer_list<telemetry::CardField> fields);

/// Decodes blocks one after another, keeping what consecutive blocks share: the parsed layouts
/// of the last few blocks (most blocks repeat an earlier block's cards and processes, and parsing
/// the layout's JSON cost as much as decoding the streams) and the buffers of the decoded streams.
class BlockDecoder {
  public:
    /// Fills in the per-card fields `fields` (a reader that needs few of them saves a third of
    /// the decoding).
    explicit BlockDecoder(CardFieldSet fields = all_card_fields());
    ~BlockDecoder();
    BlockDecoder(const BlockDecoder&) = delete;
    BlockDecoder& operator=(const BlockDecoder&) = delete;
    /// Appends the card-ticks of `row` to `out` in block order (tick, then card slot). Returns
    /// false, leaving `out` as it was, when the row is malformed.
    bool decode(const BlockRow& row, DecodedTicks& out);

  private:
    struct Parsed;
    /// The layout of `row`, parsed or from the cache; nullptr when malformed.
    const Parsed* layout_of(const BlockRow& row);

    std::vector<std::unique_ptr<Parsed>> m_layouts; ///< most recently used first
    std::unique_ptr<std::array<codec::Values, k_stream_count>> m_values;
    std::vector<const telemetry::CardFieldInfo*> m_fields; ///< the fields to fill in
};

/// Appends the card-ticks of `row` to `out` in block order (tick, then card slot). Returns false
/// when the row is malformed. One-off: a reader of many blocks keeps a BlockDecoder.
bool decode_block(const BlockRow& row, DecodedTicks& out);

/// The earliest start of a tick in a block from its two timing streams alone (a tick may start
/// before the block's first when the wall clock stepped back); nullopt when they are malformed.
std::optional<TimeUs> earliest_tick_start(TimeUs t0_us, std::int64_t n_ticks, DurationUs tick_us,
                                          std::string_view t0_delta, std::string_view dur_delta);

} // namespace gua::store
