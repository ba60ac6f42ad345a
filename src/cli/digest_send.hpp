// SPDX-License-Identifier: Apache-2.0
// `gua digest` through the configured transports ([mail], [webhook.NAME]): send, or (--dry-run)
// list who would get which digest over which transport.
#pragma once

#include "cli/digest_output.hpp"
#include "config/config.hpp"
#include "notify/transport.hpp"

#include <vector>

namespace gua::cli {

/// The transports of `cfg` that carry digests (secrets read: Fatal (usage) when they cannot be).
notify::TransportList digest_transports(const config::Config& cfg);

/// Sends every digest over every transport that takes it, waits for the queue (retries with
/// backoff as [delivery] says; failed attempts on stderr, one line each), then prints one line
/// per delivery. Throws Fatal (failure) with one line when a delivery finally failed.
void send_digests(const std::vector<DigestItem>& items, const notify::TransportList& transports,
                  const config::Config& cfg);

/// Prints who would get which digest over which transport; sends nothing.
void dry_run_sends(const std::vector<DigestItem>& items, const notify::TransportList& transports,
                   const config::Config& cfg);

} // namespace gua::cli
