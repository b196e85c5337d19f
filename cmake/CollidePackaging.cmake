# The Debian packages, made with CPack from the install rules (cmake/CollideInstall.cmake):
#   cpack -G DEB            (in the build directory)
# collide-server: the server, the CLI, the health probe, a systemd unit running as the `collide`
# system user, flags in /etc/collide/collide.conf, data in /var/lib/collide (packaging/).
# libcollide-client-dev: the C++ client library, its headers, the CMake and pkg-config files.
# Each package is a CPack component group: runtime = components server + service, devel = dev.

# The Debian documentation files of both packages (only the packages install them).
foreach(package collide-server libcollide-client-dev)
  if(package STREQUAL "collide-server")
    set(component service)
  else()
    set(component dev_doc)
  endif()
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package} COMPONENT ${component}
          EXCLUDE_FROM_ALL)
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/packaging/changelog.Debian.in
               ${PROJECT_BINARY_DIR}/packaging/changelog.Debian @ONLY)
execute_process(COMMAND gzip -n -9 -c ${PROJECT_BINARY_DIR}/packaging/changelog.Debian
                OUTPUT_FILE ${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz)
install(FILES ${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/collide-server COMPONENT service EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/libcollide-client-dev COMPONENT dev_doc
        EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_SOURCE_DIR}/docs/SERVER.md
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/collide-server COMPONENT service EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/collide-server.lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME collide-server
        COMPONENT service EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/libcollide-client-dev.lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME libcollide-client-dev
        COMPONENT dev_doc EXCLUDE_FROM_ALL)

set(CPACK_PACKAGE_NAME collide)
set(CPACK_PACKAGE_VENDOR collide)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "collide maintainers <collide@example.org>")
set(CPACK_GENERATOR DEB)
# Absolute destinations (/etc, /lib/systemd) land in the package's tree, not the build machine's.
set(CPACK_SET_DESTDIR ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ONE_PER_GROUP)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME collide-server)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION net)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/postinst ${PROJECT_SOURCE_DIR}/packaging/prerm
    ${PROJECT_SOURCE_DIR}/packaging/postrm ${PROJECT_SOURCE_DIR}/packaging/conffiles)
set(CPACK_DEBIAN_DEVEL_PACKAGE_NAME libcollide-client-dev)
set(CPACK_DEBIAN_DEVEL_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEVEL_PACKAGE_DEPENDS "libgrpc++-dev, libprotobuf-dev, libabsl-dev")

# The first line of each description is the package's synopsis.
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "collide collision-query server
collide-server answers collision queries (raycasts, overlaps, sweeps, standing
watches) over gRPC on scenes of rigid bodies it keeps durably. The package has
the server, the collide command-line client, the health probe and a systemd
unit (collide-server.service) running it as the collide system user.")
set(CPACK_DEBIAN_DEVEL_DESCRIPTION "C++ client library of the collide collision-query server
The static client library, its headers, the generated protobuf and gRPC code
it needs, a CMake package (find_package(collide CONFIG) gives collide::client)
and the pkg-config file collide-client.pc.")

# CPack installs each component with CMake's install script, which writes
# install_manifest_<component>.txt into the build directory whatever cpack's -B: removed once the
# packages are made, so that packaging leaves no file in the build tree (cpack's own work files go
# to -B; tests/install/clean_tree_test.sh checks both).
file(WRITE ${PROJECT_BINARY_DIR}/cpack_post_build.cmake
     "foreach(component server service dev dev_doc)\n"
     "  file(REMOVE \"${PROJECT_BINARY_DIR}/install_manifest_\${component}.txt\")\n"
     "endforeach()\n")
set(CPACK_POST_BUILD_SCRIPTS ${PROJECT_BINARY_DIR}/cpack_post_build.cmake)

include(CPack)
cpack_add_component_group(runtime)
cpack_add_component_group(devel)
cpack_add_component(server GROUP runtime)
cpack_add_component(service GROUP runtime)
cpack_add_component(dev GROUP devel)
cpack_add_component(dev_doc GROUP devel)
