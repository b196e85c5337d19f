# Install rules (`cmake --install`): the server, the CLI and the health probe; the C++ client
# library with its headers and the generated protobuf/gRPC code it needs, exported as the CMake
# package `collide` (find_package(collide CONFIG) -> collide::client) and described by the
# pkg-config file collide-client.pc. The Debian package (cmake/CollidePackaging.cmake) is made
# from the same rules.
#
# Components: `server` (binaries), `dev` (client library, headers, CMake and pkg-config files),
# `service` (the systemd unit and /etc/collide/collide.conf: absolute paths, so excluded from a
# plain `cmake --install`; only the Debian package installs it).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Headers go under <includedir>/collide, which is the include directory consumers get: the client
# headers keep their in-tree paths ("client/cpp/client.h") and the generated ones theirs
# ("collide/v1/collide.pb.h").
set(COLLIDE_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/collide)
set(COLLIDE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/collide)

foreach(program collide-server collide collide-health-probe)
  if(TARGET ${program})
    install(TARGETS ${program} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT server)
  endif()
endforeach()

if(TARGET collide_client AND TARGET collide_proto)
  # The in-tree include directories name the source and build trees; installed, both are the
  # one include directory above.
  set_property(TARGET collide_client PROPERTY INTERFACE_INCLUDE_DIRECTORIES
               $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
               $<INSTALL_INTERFACE:${COLLIDE_INSTALL_INCLUDEDIR}>)
  set_property(TARGET collide_proto PROPERTY INTERFACE_INCLUDE_DIRECTORIES
               $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/proto>
               $<INSTALL_INTERFACE:${COLLIDE_INSTALL_INCLUDEDIR}>)
  set_property(TARGET collide_client PROPERTY EXPORT_NAME client)
  set_property(TARGET collide_proto PROPERTY EXPORT_NAME proto)

  install(TARGETS collide_client collide_proto EXPORT collideTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/client/cpp/
          DESTINATION ${COLLIDE_INSTALL_INCLUDEDIR}/client/cpp COMPONENT dev
          FILES_MATCHING PATTERN "*.h")
  # The API's messages only: storage.proto is the server's on-disk format, not an interface.
  install(DIRECTORY ${PROJECT_BINARY_DIR}/proto/collide/
          DESTINATION ${COLLIDE_INSTALL_INCLUDEDIR}/collide COMPONENT dev
          FILES_MATCHING PATTERN "*.pb.h" PATTERN "storage.*" EXCLUDE)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/proto/collide/
          DESTINATION ${COLLIDE_INSTALL_INCLUDEDIR}/collide COMPONENT dev
          FILES_MATCHING PATTERN "*.proto" PATTERN "storage.*" EXCLUDE)

  install(EXPORT collideTargets NAMESPACE collide:: DESTINATION ${COLLIDE_INSTALL_CMAKEDIR}
          COMPONENT dev)
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/collideConfig.cmake.in
                                ${PROJECT_BINARY_DIR}/cmake/collideConfig.cmake
                                INSTALL_DESTINATION ${COLLIDE_INSTALL_CMAKEDIR})
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/collideConfigVersion.cmake
                                   COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/cmake/collideConfig.cmake
                ${PROJECT_BINARY_DIR}/cmake/collideConfigVersion.cmake
          DESTINATION ${COLLIDE_INSTALL_CMAKEDIR} COMPONENT dev)

  # pkg-config: the paths are relative to the .pc file's own location (${pcfiledir}), so the
  # file works in whatever prefix it is installed.
  file(RELATIVE_PATH COLLIDE_PC_TO_PREFIX
       /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
  string(REGEX REPLACE "/$" "" COLLIDE_PC_TO_PREFIX "${COLLIDE_PC_TO_PREFIX}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/collide-client.pc.in
                 ${PROJECT_BINARY_DIR}/cmake/collide-client.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/cmake/collide-client.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
endif()

# The service: a systemd unit and its environment file (packaging/).
install(FILES ${PROJECT_SOURCE_DIR}/packaging/collide-server.service
        DESTINATION /lib/systemd/system COMPONENT service EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/collide.conf
        DESTINATION /etc/collide COMPONENT service EXCLUDE_FROM_ALL)
