// SPDX-License-Identifier: Apache-2.0
// The per-card state timeline of a report: state time per time bucket, at most ~480 buckets over
// the window and never finer than the data (an hourly rollup fills its hour as one span).
#pragma once

#include "audit/classify.hpp"
#include "core/time.hpp"
#include "report/model.hpp"
#include "store/database.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gua::report {

/// The most buckets a card's timeline has over a window.
inline constexpr std::size_t k_timeline_buckets = 480;

/// Per-card state time in buckets of a round width (1 minute … 1 week, then whole weeks): the
/// smallest width that covers the window in at most `max_buckets` buckets aligned to multiples
/// of the width since the epoch (UTC).
class TimelineGrid {
  public:
    /// A grid over [from, to) (from < to).
    TimelineGrid(TimeUs from, TimeUs to, std::size_t max_buckets = k_timeline_buckets);

    /// The width of a bucket.
    DurationUs bucket_us() const { return m_width; }
    /// Adds the state time of card `gpu` (any index) over [from, to). A span no longer than a
    /// bucket lands in the bucket it falls in, or is split by overlap between the two it
    /// straddles; a longer one (a rollup's hour or day in finer buckets) joins the buckets it
    /// covers into one span. Spans beyond the grid are clamped to its ends; totals are exact.
    void add(std::uint32_t gpu, TimeUs from, TimeUs to, const audit::StateTimes& states);
    /// The card's spans with data, in time order, clipped to the window.
    std::vector<TimelineSpan> spans(std::uint32_t gpu) const;

  private:
    struct Card {
        std::vector<audit::StateTimes> states; ///< by bucket; a joined span's sits in its head
        std::vector<std::uint32_t> head;       ///< first bucket of each bucket's span
    };
    Card& card(std::uint32_t gpu);
    std::size_t bucket_of(TimeUs t) const;
    void join(Card& c, std::size_t first, std::size_t last) const;

    TimeUs m_from;
    TimeUs m_to;
    TimeUs m_start = 0; ///< start of the first bucket (≤ m_from)
    DurationUs m_width = 0;
    std::size_t m_count = 0;
    std::vector<Card> m_cards; ///< by card index; empty where nothing was added
};

/// A card's state time over a stretch longer than an hour and than a bucket (a daily rollup's
/// card), set aside to be drawn hour by hour.
struct CoarseSpan {
    std::uint32_t gpu = 0;
    TimeUs from = 0;
    TimeUs to = 0;
    audit::StateTimes states;
};

/// Adds each of `coarse` to `grid` hour by hour from the hourly rollups in `db` where those hours
/// add up to it exactly, else whole (as one joined span).
void add_coarse_spans(store::Database& db, const std::vector<CoarseSpan>& coarse,
                      TimelineGrid& grid);

} // namespace gua::report
