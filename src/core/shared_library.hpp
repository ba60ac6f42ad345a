// SPDX-License-Identifier: Apache-2.0
// Optional shared libraries opened on first use: libcurl (gua report --prometheus) and
// libmicrohttpd (gua daemon --listen) pull in TLS, Kerberos and LDAP stacks worth ~6.5 MB of
// resident memory that a daemon without those features should not carry.
#pragma once

#include <string>

namespace gua {

/// A dlopen'ed library (RTLD_NOW | RTLD_LOCAL), never closed. Thread-safe to open.
class SharedLibrary {
  public:
    /// Opens `soname` once per process (later calls return the same library). Throws Fatal with
    /// one line naming `feature` and the Debian `package` to install when it cannot be loaded.
    static const SharedLibrary& open(const std::string& soname, const std::string& package,
                                     const std::string& feature);

    /// The address of `name`; throws Fatal naming the library when it is missing.
    void* address(const char* name) const;

    /// Fills `fn` with the function `name` (e.g. `lib.bind(m_init, "curl_easy_init")`).
    template <typename F> void bind(F*& fn, const char* name) const {
        fn = reinterpret_cast<F*>(address(name));
    }

  private:
    SharedLibrary(void* handle, std::string soname)
        : m_handle(handle), m_soname(std::move(soname)) {}
    void* m_handle;
    std::string m_soname;
};

} // namespace gua
