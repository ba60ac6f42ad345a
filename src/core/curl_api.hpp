// SPDX-License-Identifier: Apache-2.0
// libcurl's entry points, dlopen'ed on first use (core/shared_library.hpp): shared by the
// Prometheus client and the mail and webhook transports.
#pragma once

#define CURL_DISABLE_TYPECHECK // calls go through function pointers
#include <curl/curl.h>

#include <string>

namespace gua {

/// The libcurl functions gua calls.
struct CurlApi {
    decltype(&curl_easy_init) easy_init = nullptr;
    decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
    decltype(&curl_easy_reset) easy_reset = nullptr;
    decltype(&curl_easy_setopt) easy_setopt = nullptr;
    decltype(&curl_easy_perform) easy_perform = nullptr;
    decltype(&curl_easy_getinfo) easy_getinfo = nullptr;
    decltype(&curl_easy_strerror) easy_strerror = nullptr;
    decltype(&curl_easy_escape) easy_escape = nullptr;
    decltype(&curl_free) free = nullptr;
    decltype(&curl_global_init) global_init = nullptr;
    decltype(&curl_slist_append) slist_append = nullptr;
    decltype(&curl_slist_free_all) slist_free_all = nullptr;
};

/// libcurl.so.4, loaded once per process (curl_global_init run then, before any thread makes a
/// handle). Throws Fatal naming `feature` and the package libcurl4 when it cannot be loaded.
const CurlApi& curl_api(const std::string& feature);

} // namespace gua
