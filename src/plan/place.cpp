// SPDX-License-Identifier: Apache-2.0
// Online best-fit placement with a FIFO queue, and the unbounded replay for concurrency.
#include "plan/place.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <queue>
#include <tuple>

namespace gua::plan {

namespace {

constexpr TimeUs k_never = std::numeric_limits<TimeUs>::max();

/// The free capacity of each card, grouped into hosts of `per_host` cards.
class Cards {
  public:
    Cards(Capacity card, int gpus, int per_host)
        : m_card(card), m_free(static_cast<std::size_t>(gpus), card), m_per_host(per_host),
          m_host_empty(static_cast<std::size_t>((gpus + per_host - 1) / per_host), 0) {
        for (std::size_t i = 0; i < m_free.size(); ++i) {
            ++m_host_empty[host(i)];
        }
    }

    /// Places `r`: the cards it got, or empty when it does not fit now.
    std::vector<int> place(const Request& r) {
        return r.gpus > 1 ? place_gang(r.gpus) : place_one(r.need);
    }

    void release(const std::vector<int>& cards, Capacity need) {
        for (int c : cards) {
            Capacity& f = m_free[static_cast<std::size_t>(c)];
            f.a += need.a;
            f.b += need.b;
            if (f == m_card) {
                ++m_host_empty[host(static_cast<std::size_t>(c))];
            }
        }
    }

  private:
    std::size_t host(std::size_t card) const { return card / static_cast<std::size_t>(m_per_host); }

    void take(std::size_t c, Capacity need) {
        if (m_free[c] == m_card) {
            --m_host_empty[host(c)];
        }
        m_free[c].a -= need.a;
        m_free[c].b -= need.b;
    }

    std::vector<int> place_one(Capacity need) {
        std::optional<std::size_t> best;
        std::tuple<double, int> best_key{0.0, 0};
        for (std::size_t c = 0; c < m_free.size(); ++c) {
            const Capacity& f = m_free[c];
            if (f.a < need.a || f.b < need.b) {
                continue;
            }
            const double left = static_cast<double>(f.a - need.a) / static_cast<double>(m_card.a) +
                                static_cast<double>(f.b - need.b) / static_cast<double>(m_card.b);
            const std::tuple<double, int> key{left, m_host_empty[host(c)]};
            if (!best || key < best_key) {
                best = c;
                best_key = key;
            }
        }
        if (!best) {
            return {};
        }
        take(*best, need);
        return {static_cast<int>(*best)};
    }

    std::vector<int> place_gang(int k) {
        std::optional<std::size_t> best;
        for (std::size_t h = 0; h < m_host_empty.size(); ++h) {
            if (m_host_empty[h] >= k && (!best || m_host_empty[h] < m_host_empty[*best])) {
                best = h;
            }
        }
        if (!best) {
            return {};
        }
        std::vector<int> got;
        const std::size_t first = *best * static_cast<std::size_t>(m_per_host);
        for (std::size_t c = first; c < m_free.size() && static_cast<int>(got.size()) < k; ++c) {
            if (m_free[c] == m_card) {
                take(c, m_card);
                got.push_back(static_cast<int>(c));
            }
        }
        return got;
    }

    Capacity m_card;
    std::vector<Capacity> m_free;
    int m_per_host;
    std::vector<int> m_host_empty; ///< per host: cards with nothing on them
};

/// An end in the queue: a request's own (a fixed end), or the next end among a card's stretched
/// co-runners (`card` ≥ 0); an entry whose version is no longer current is stale.
struct Departure {
    TimeUs end = 0;
    std::size_t id = 0; ///< the request, or the card
    bool card = false;
    std::uint32_t version = 0;
    bool operator>(const Departure& o) const { return end > o.end; }
};

/// The requests running and when each ends. Without a load (exclusive, MIG, a whole card, an
/// idle holder) a request ends its duration after it starts. Requests with a load (MPS) that
/// share a card whose loads add up to S > 100 % each progress at 100/S of their own pace, so
/// their ends move whenever the card's set changes. They all progress at the card's one pace,
/// so each card keeps a virtual clock (the work one of them has done since the card opened):
/// a request ends when the clock reaches its start + its duration, and only the card's next
/// end sits in the queue, rescheduled when the pace changes.
class Running {
  public:
    explicit Running(const std::vector<Request>& requests)
        : m_requests(requests), m_started(requests.size(), 0) {}

    bool empty() {
        drop_stale();
        return m_queue.empty();
    }
    /// The next end; only when !empty().
    TimeUs next_end() {
        drop_stale();
        return m_queue.top().end;
    }

    void start(TimeUs t, std::size_t r, const std::vector<int>& cards) {
        m_started[r] = t;
        const Request& req = m_requests[r];
        if (req.load_pct <= 0 || cards.size() != 1) {
            m_queue.push(Departure{t + req.duration, r, false, 0});
            return;
        }
        const int c = cards.front();
        Shared& card = card_of(c);
        advance(card, t);
        card.ends.emplace(card.clock + static_cast<double>(req.duration), r);
        card.load += req.load_pct;
        reschedule(c, t);
    }

    /// Ends the request due at next_end(), reschedules its card's co-runners; returns it.
    std::size_t finish() {
        drop_stale();
        const Departure d = m_queue.top();
        m_queue.pop();
        std::size_t r = d.id;
        if (d.card) {
            Shared& card = card_of(static_cast<int>(d.id));
            advance(card, d.end);
            r = card.ends.top().second;
            card.ends.pop();
            card.load = card.ends.empty() ? 0.0 : card.load - m_requests[r].load_pct;
            reschedule(static_cast<int>(d.id), d.end);
        }
        m_run_us += static_cast<double>(d.end - m_started[r]);
        m_solo_us += static_cast<double>(m_requests[r].duration);
        return r;
    }

    double run_us() const { return m_run_us; }
    double solo_us() const { return m_solo_us; }

  private:
    /// A card's stretched co-runners: their loads, the card's virtual clock and their ends on it.
    struct Shared {
        double load = 0;
        double clock = 0; ///< work done at the card's pace since it opened, µs
        TimeUs since = 0; ///< when `clock` was last advanced
        std::uint32_t version = 0;
        std::priority_queue<std::pair<double, std::size_t>,
                            std::vector<std::pair<double, std::size_t>>, std::greater<>>
            ends; ///< (clock at its end, request)
    };

    static double pace(const Shared& card) { return card.load > 100.0 ? 100.0 / card.load : 1.0; }

    void advance(Shared& card, TimeUs t) {
        card.clock += static_cast<double>(t - card.since) * pace(card);
        card.since = t;
    }

    /// Puts the card's next end in the queue at its pace now (the older entry goes stale).
    void reschedule(int c, TimeUs t) {
        Shared& card = card_of(c);
        ++card.version;
        if (card.ends.empty()) {
            return;
        }
        const double left = std::max(0.0, (card.ends.top().first - card.clock) / pace(card));
        m_queue.push(Departure{t + static_cast<TimeUs>(std::ceil(left - 1e-3)),
                               static_cast<std::size_t>(c), true, card.version});
    }

    void drop_stale() {
        while (!m_queue.empty() && m_queue.top().card &&
               m_queue.top().version != m_cards[m_queue.top().id].version) {
            m_queue.pop();
        }
    }

    Shared& card_of(int card) {
        const auto c = static_cast<std::size_t>(card);
        if (c >= m_cards.size()) {
            m_cards.resize(c + 1);
        }
        return m_cards[c];
    }

    const std::vector<Request>& m_requests;
    std::vector<TimeUs> m_started;
    std::vector<Shared> m_cards; ///< per card, for requests with a load
    std::priority_queue<Departure, std::vector<Departure>, std::greater<>> m_queue;
    double m_run_us = 0;
    double m_solo_us = 0;
};

} // namespace

Replay replay(const std::vector<Request>& requests, Capacity card, int gpus, int per_host,
              const std::function<bool(bool, DurationUs)>& give_up) {
    Replay out;
    out.waits.assign(requests.size(), std::nullopt);
    per_host = std::max(1, std::min(per_host, gpus));
    Cards cards(card, gpus, per_host);
    std::vector<std::vector<int>> placed(requests.size());
    Running running(requests);
    std::deque<std::size_t> queue;
    std::size_t next = 0;
    while (next < requests.size() || !queue.empty()) {
        const TimeUs t_arrival = next < requests.size() ? requests[next].arrival : k_never;
        const TimeUs t_departure = running.empty() ? k_never : running.next_end();
        const TimeUs t = std::min(t_arrival, t_departure);
        if (t == k_never) {
            out.stopped = true; // the head can never start
            return out;
        }
        while (!running.empty() && running.next_end() == t) {
            const std::size_t r = running.finish();
            cards.release(placed[r], requests[r].gpus > 1 ? card : requests[r].need);
        }
        while (next < requests.size() && requests[next].arrival == t) {
            queue.push_back(next++);
        }
        while (!queue.empty()) {
            const std::size_t r = queue.front();
            const Request& req = requests[r];
            if (req.gpus > per_host) {
                out.stopped = true;
                return out;
            }
            placed[r] = cards.place(req);
            if (placed[r].empty()) {
                break;
            }
            queue.pop_front();
            const DurationUs wait = t - req.arrival;
            out.waits[r] = wait;
            running.start(t, r, placed[r]);
            if (wait > 0 && give_up(req.interactive, wait)) {
                out.stopped = true;
                return out;
            }
        }
    }
    return out;
}

std::vector<Step> recorded_placement(const Demand& demand) {
    std::map<std::int64_t, std::vector<std::pair<TimeUs, TimeUs>>> by_card;
    for (const Unit& u : demand.units) {
        for (const Presence& p : u.presences) {
            for (const Phase& ph : p.phases) {
                by_card[p.gpu].emplace_back(ph.begin, ph.end);
            }
        }
    }
    std::vector<std::pair<TimeUs, int>> edges;
    for (auto& [gpu, spans] : by_card) {
        std::sort(spans.begin(), spans.end());
        std::pair<TimeUs, TimeUs> cur = spans.front();
        for (const auto& s : spans) {
            if (s.first > cur.second) {
                edges.emplace_back(cur.first, 1);
                edges.emplace_back(cur.second, -1);
                cur = s;
            } else {
                cur.second = std::max(cur.second, s.second);
            }
        }
        edges.emplace_back(cur.first, 1);
        edges.emplace_back(cur.second, -1);
    }
    std::sort(edges.begin(), edges.end());
    std::vector<Step> steps;
    int count = 0;
    for (std::size_t i = 0; i < edges.size();) {
        const TimeUs t = edges[i].first;
        for (; i < edges.size() && edges[i].first == t; ++i) {
            count += edges[i].second;
        }
        steps.push_back(Step{t, count});
    }
    return steps;
}

namespace {

/// The cards in use when nothing waits: opened as needed, best fit onto those in use.
class OpenCards {
  public:
    explicit OpenCards(Capacity card) : m_card(card) {}

    int in_use() const { return m_in_use; }

    std::vector<int> place(const Request& req) {
        std::vector<int> got;
        if (req.gpus == 1) {
            if (const std::optional<std::size_t> c = best_fit(req.need)) {
                got.push_back(static_cast<int>(*c));
            }
        }
        for (std::size_t c = 0; c < m_open.size() && static_cast<int>(got.size()) < req.gpus; ++c) {
            if (m_open[c].units == 0) {
                got.push_back(static_cast<int>(c));
            }
        }
        while (static_cast<int>(got.size()) < req.gpus) {
            m_open.push_back(Open{m_card, 0});
            got.push_back(static_cast<int>(m_open.size() - 1));
        }
        change(got, req, 1);
        return got;
    }

    void release(const std::vector<int>& cards, const Request& req) { change(cards, req, -1); }

  private:
    struct Open {
        Capacity free;
        int units = 0;
    };

    std::optional<std::size_t> best_fit(Capacity need) const {
        std::optional<std::size_t> best;
        std::int64_t best_left = 0;
        for (std::size_t c = 0; c < m_open.size(); ++c) {
            const Open& o = m_open[c];
            if (o.units > 0 && o.free.a >= need.a && o.free.b >= need.b) {
                const std::int64_t left =
                    (o.free.a - need.a) * m_card.b + (o.free.b - need.b) * m_card.a;
                if (!best || left < best_left) {
                    best = c;
                    best_left = left;
                }
            }
        }
        return best;
    }

    /// Takes (`sign` 1) or gives back (−1) `req`'s need on `cards`.
    void change(const std::vector<int>& cards, const Request& req, int sign) {
        const Capacity need = req.gpus > 1 ? m_card : req.need;
        for (int c : cards) {
            Open& o = m_open[static_cast<std::size_t>(c)];
            m_in_use += (sign > 0 && o.units == 0) ? 1 : 0;
            o.units += sign;
            m_in_use -= (sign < 0 && o.units == 0) ? 1 : 0;
            o.free.a -= sign * need.a;
            o.free.b -= sign * need.b;
        }
    }

    Capacity m_card;
    std::vector<Open> m_open;
    int m_in_use = 0;
};

} // namespace

std::vector<Step> unbounded(const std::vector<Request>& requests, Capacity card, double* run_us,
                            double* solo_us) {
    OpenCards cards(card);
    std::vector<std::vector<int>> placed(requests.size());
    Running running(requests);
    std::vector<Step> steps;
    std::size_t next = 0;
    while (next < requests.size() || !running.empty()) {
        const TimeUs t_arrival = next < requests.size() ? requests[next].arrival : k_never;
        const TimeUs t = running.empty() ? t_arrival : std::min(t_arrival, running.next_end());
        while (!running.empty() && running.next_end() == t) {
            const std::size_t r = running.finish();
            cards.release(placed[r], requests[r]);
        }
        for (; next < requests.size() && requests[next].arrival == t; ++next) {
            placed[next] = cards.place(requests[next]);
            running.start(t, next, placed[next]);
        }
        if (!steps.empty() && steps.back().t == t) {
            steps.back().count = cards.in_use();
        } else if (steps.empty() || steps.back().count != cards.in_use()) {
            steps.push_back(Step{t, cards.in_use()});
        }
    }
    if (run_us != nullptr && solo_us != nullptr) {
        *run_us = running.run_us();
        *solo_us = running.solo_us();
    }
    return steps;
}

} // namespace gua::plan
