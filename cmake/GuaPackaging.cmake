# Install rules for the unit, the default configuration and the man page, and the Debian package
# (`make package` → cpack -G DEB): gua_<version>_<arch>.deb with the config as a conffile and
# maintainer scripts that create the user and keep the database on remove (purge deletes it).
pkg_get_variable(GUA_SYSTEMD_UNITDIR_DEFAULT systemd systemdsystemunitdir)
if(NOT GUA_SYSTEMD_UNITDIR_DEFAULT)
    set(GUA_SYSTEMD_UNITDIR_DEFAULT /lib/systemd/system)
endif()
set(GUA_SYSTEMD_UNITDIR ${GUA_SYSTEMD_UNITDIR_DEFAULT} CACHE PATH "Where gua.service is installed")
set(GUA_CONFIG_DIR /etc/gua CACHE PATH "Where gua.toml is installed")

set(gua_packaging ${PROJECT_SOURCE_DIR}/packaging)
set(gua_man_gz ${PROJECT_BINARY_DIR}/packaging/gua.1.gz)
add_custom_command(OUTPUT ${gua_man_gz}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/packaging
    COMMAND gzip -9n -c ${gua_packaging}/gua.1 > ${gua_man_gz}
    DEPENDS ${gua_packaging}/gua.1
    COMMENT "Compressing the man page")
add_custom_target(gua_man ALL DEPENDS ${gua_man_gz})

install(FILES ${gua_packaging}/gua.service DESTINATION ${GUA_SYSTEMD_UNITDIR})
install(FILES ${gua_packaging}/gua.toml DESTINATION ${GUA_CONFIG_DIR})
install(FILES ${gua_man_gz} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(CODE "execute_process(COMMAND ${CMAKE_COMMAND} -E create_symlink gua.1.gz
    \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_MANDIR}/man1/gpu-usage-audit.1.gz)")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gua)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "gua maintainers <maintainers@users.noreply.a-seed-8845e0c1.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU usage audit: active, idle-held and truly idle GPU time")
set(CPACK_PACKAGE_DESCRIPTION
    "gua records how NVIDIA GPUs are really used, per card and per sampling interval:\n\
active, idle-held (memory held while the SMs are cold) and truly idle, attributed to\n\
users, containers, Slurm jobs and Jupyter kernels without double counting. A systemd\n\
service samples NVML into one SQLite file; `gua report` prints the audit.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libcurl4 and libmicrohttpd12 are dlopen'ed (gua report --prometheus, gua daemon --listen), so
# dpkg-shlibdeps cannot see them.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, libcurl4, libmicrohttpd12")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${gua_packaging}/debian/postinst;${gua_packaging}/debian/prerm;${gua_packaging}/debian/postrm;${gua_packaging}/debian/conffiles")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
include(CPack)
