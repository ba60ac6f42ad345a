# SPDX-License-Identifier: Apache-2.0
# Hardening as Debian builds its packages: the stack protector, _FORTIFY_SOURCE, format-string
# checks, full RELRO and immediate binding (bindnow), taken from `dpkg-buildflags` with
# hardening=+all when it is installed. Optimized builds without sanitizers only (_FORTIFY_SOURCE
# needs optimization; the sanitizers bring their own checks). PIE is the compiler's default.
option(GUA_HARDENING "Compile and link with the hardening flags of dpkg-buildflags" ON)
find_program(GUA_DPKG_BUILDFLAGS dpkg-buildflags)
if(GUA_HARDENING AND GUA_DPKG_BUILDFLAGS AND NOT GUA_SANITIZE)
    set(gua_hardening_compile "")
    set(gua_hardening_link "")
    foreach(kind CPPFLAGS CXXFLAGS LDFLAGS)
        execute_process(
            COMMAND ${CMAKE_COMMAND} -E env DEB_BUILD_MAINT_OPTIONS=hardening=+all
                    ${GUA_DPKG_BUILDFLAGS} --get ${kind}
            OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE)
        separate_arguments(flags UNIX_COMMAND "${flags}")
        foreach(flag IN LISTS flags)
            if(flag MATCHES "^-(fstack-protector|fstack-clash-protection|fcf-protection|D_FORTIFY_SOURCE|Wformat|Werror=format)")
                list(APPEND gua_hardening_compile ${flag})
            elseif(flag MATCHES "^-Wl,")
                list(APPEND gua_hardening_link ${flag})
            endif()
        endforeach()
    endforeach()
    list(REMOVE_DUPLICATES gua_hardening_compile)
    add_compile_options("$<$<NOT:$<CONFIG:Debug>>:${gua_hardening_compile}>")
    add_link_options(${gua_hardening_link})
    message(STATUS "Hardening (dpkg-buildflags): ${gua_hardening_compile} ${gua_hardening_link}")
endif()
