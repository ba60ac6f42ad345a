// SPDX-License-Identifier: Apache-2.0
// Client-certificate verification through GnuTLS: libmicrohttpd only asks for the certificate;
// whether it verifies is checked here, per request.
#include "export/tls_peer.hpp"

#include "core/shared_library.hpp"

#include <gnutls/gnutls.h>

namespace gua::exporter {

namespace {

struct GnutlsApi {
    decltype(&gnutls_certificate_get_peers) get_peers = nullptr;
    decltype(&gnutls_certificate_verify_peers2) verify_peers2 = nullptr;
};

const GnutlsApi& gnutls() {
    static const GnutlsApi api = [] {
        const SharedLibrary& lib =
            SharedLibrary::open("libgnutls.so.30", "libgnutls30", "gua daemon --web-config");
        GnutlsApi a;
        lib.bind(a.get_peers, "gnutls_certificate_get_peers");
        lib.bind(a.verify_peers2, "gnutls_certificate_verify_peers2");
        return a;
    }();
    return api;
}

} // namespace

bool peer_certificate_verified(void* session) {
    if (session == nullptr) {
        return false;
    }
    auto* s = static_cast<gnutls_session_t>(session);
    unsigned count = 0;
    if (gnutls().get_peers(s, &count) == nullptr || count == 0) {
        return false;
    }
    unsigned status = 0;
    return gnutls().verify_peers2(s, &status) == GNUTLS_E_SUCCESS && status == 0;
}

} // namespace gua::exporter
