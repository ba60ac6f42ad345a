// SPDX-License-Identifier: Apache-2.0
// Checks a TLS client's certificate against the client CA of --web-config (GnuTLS, loaded on
// first use like the libmicrohttpd that links it).
#pragma once

namespace gua::exporter {

/// Whether the client of the GnuTLS session `session` (a gnutls_session_t) presented a
/// certificate that verifies against the server's trusted CAs. False without a certificate.
bool peer_certificate_verified(void* session);

} // namespace gua::exporter
