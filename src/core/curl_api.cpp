// SPDX-License-Identifier: Apache-2.0
// Loads libcurl's entry points once (the first caller's feature names it in the error).
#include "core/curl_api.hpp"

#include "core/shared_library.hpp"

namespace gua {

const CurlApi& curl_api(const std::string& feature) {
    // A failed open throws out of the initializer, so a later call tries again.
    static const CurlApi api = [&feature] {
        const SharedLibrary& lib = SharedLibrary::open("libcurl.so.4", "libcurl4", feature);
        CurlApi a;
        lib.bind(a.easy_init, "curl_easy_init");
        lib.bind(a.easy_cleanup, "curl_easy_cleanup");
        lib.bind(a.easy_reset, "curl_easy_reset");
        lib.bind(a.easy_setopt, "curl_easy_setopt");
        lib.bind(a.easy_perform, "curl_easy_perform");
        lib.bind(a.easy_getinfo, "curl_easy_getinfo");
        lib.bind(a.easy_strerror, "curl_easy_strerror");
        lib.bind(a.easy_escape, "curl_easy_escape");
        lib.bind(a.free, "curl_free");
        lib.bind(a.global_init, "curl_global_init");
        lib.bind(a.slist_append, "curl_slist_append");
        lib.bind(a.slist_free_all, "curl_slist_free_all");
        // Once, before any thread makes a handle: curl_easy_init would otherwise do it lazily,
        // which is not thread-safe.
        a.global_init(CURL_GLOBAL_DEFAULT);
        return a;
    }();
    return api;
}

} // namespace gua
