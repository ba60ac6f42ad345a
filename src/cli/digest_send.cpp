// SPDX-License-Identifier: Apache-2.0
// Sending `gua digest`'s messages through the delivery queue, and its --dry-run listing.
#include "cli/digest_send.hpp"

#include "core/fatal.hpp"
#include "notify/notices.hpp"
#include "notify/queue.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace gua::cli {

namespace {

std::vector<notify::Notice> digest_notices(const std::vector<DigestItem>& items,
                                           const config::Config& cfg) {
    const std::string domain = cfg.delivery.mail ? cfg.delivery.mail->domain : std::string();
    std::vector<notify::Notice> out;
    for (const DigestItem& i : items) {
        nlohmann::json figures = report::digest_json(i.figures);
        figures["address"] = i.message.address;
        figures["subject"] = i.message.subject;
        out.push_back(notify::digest_notice(i.message, domain, std::move(figures)));
    }
    return out;
}

void say(const std::string& line) {
    std::fwrite(line.data(), 1, line.size(), stdout);
}

} // namespace

notify::TransportList digest_transports(const config::Config& cfg) {
    notify::TransportList out;
    for (auto& t : notify::make_transports(cfg.delivery)) {
        if (t->carries(config::Audience::digest)) {
            out.push_back(std::move(t));
        }
    }
    return out;
}

void dry_run_sends(const std::vector<DigestItem>& items, const notify::TransportList& transports,
                   const config::Config& cfg) {
    std::size_t sends = 0;
    for (const notify::Notice& n : digest_notices(items, cfg)) {
        for (const auto& t : transports) {
            if (t->takes(n)) {
                ++sends;
                say(fmt::format("would send {} → {}: {}\n", n.who, t->target(n), n.subject));
            } else {
                say(fmt::format("no {} for {}: no address ([digest.recipients] or [mail] "
                                "domain)\n",
                                t->label(), n.who));
            }
        }
    }
    say(fmt::format("{} digest{}, {} deliver{}; nothing sent (--dry-run)\n", items.size(),
                    items.size() == 1 ? "" : "s", sends, sends == 1 ? "y" : "ies"));
    std::fflush(stdout);
}

void send_digests(const std::vector<DigestItem>& items, const notify::TransportList& transports,
                  const config::Config& cfg) {
    notify::QueueOptions o;
    o.attempts = cfg.delivery.attempts;
    o.backoff_us = cfg.delivery.backoff_us;
    o.max_backoff_us = cfg.delivery.max_backoff_us;
    o.capacity = items.size() * transports.size() + 1; // gua digest never drops
    o.log = [](const std::string& line) {
        std::fprintf(stderr, "gua: %s\n", line.c_str());
        std::fflush(stderr);
    };
    notify::DeliveryQueue queue(o, transports);
    for (const notify::Notice& n : digest_notices(items, cfg)) {
        for (const auto& t : transports) {
            if (t->takes(n)) {
                queue.push(t, n);
            } else {
                std::fprintf(stderr,
                             "gua: no %s for %s: no address ([digest.recipients] or "
                             "[mail] domain)\n",
                             t->label().c_str(), n.who.c_str());
            }
        }
    }
    const std::vector<notify::Outcome> outcomes = queue.wait_idle();
    std::size_t failed = 0;
    const notify::Outcome* first = nullptr;
    for (const notify::Outcome& r : outcomes) {
        if (r.delivered) {
            say(fmt::format("sent {} via {}{}\n", r.who, r.transport,
                            r.attempts > 1 ? fmt::format(" (attempt {})", r.attempts) : ""));
        } else if (++failed == 1) {
            first = &r;
        }
    }
    std::fflush(stdout);
    if (failed > 0) {
        throw Fatal(fmt::format("{} of {} deliveries failed; the first: {} for {}: {}", failed,
                                outcomes.size(), first->transport, first->who, first->error));
    }
}

} // namespace gua::cli
