# libember.so and what `cmake --install` puts under the prefix:
#
#   bin/ember                                  the CLI
#   include/ember.h                            the C API
#   lib/libember.so.1 (and libember.so)        the C API as a shared library
#   lib/pkgconfig/ember.pc                     pkg-config --cflags --libs ember
#   lib/cmake/ember/emberConfig.cmake (+ Version, Targets)   find_package(ember), ember::ember
#   share/man/man1/ember.1.gz, share/doc/<package>/copyright   (EmberPackage.cmake)
#
# Why a shared library rather than the static ones: libember.a and
# libember_kernels.a are C++ and need OpenMP and the C++
# runtime on the consumer's link line (in the right order, with the C++
# linker), and they export every internal ember:: symbol. libember.so carries
# those dependencies itself (DT_NEEDED), so a C program links it with
# `-lember` alone, and a linker version script (cmake/ember.map) exports the
# ember_* functions of include/ember.h and hides everything else: nothing of
# ember's C++ internals or of the static code it pulls in can clash with the
# consumer's symbols. (The version script rather than -fvisibility=hidden: the
# static libraries, which the CLI and the tests link, stay as they are and are
# compiled once.) The CLI keeps linking the static library: one file to copy.
# GNUInstallDirs puts libraries in Debian's multiarch folder (lib/<triplet>)
# under the prefix /usr only when not cross-compiling; the packages of the ARM
# builds (EmberPackage.cmake) want it there too.
if(CMAKE_CROSSCOMPILING AND CMAKE_LIBRARY_ARCHITECTURE AND CMAKE_INSTALL_PREFIX MATCHES "^/usr/?$"
   AND NOT DEFINED CACHE{CMAKE_INSTALL_LIBDIR} AND EXISTS /etc/debian_version)
  set(CMAKE_INSTALL_LIBDIR lib/${CMAKE_LIBRARY_ARCHITECTURE} CACHE PATH "Object code libraries")
endif()
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The C API's objects (the same ones libember.a archives, compiled once) go
# into the shared library itself; the rest of the runtime comes from libember.a
# as they need it.
add_library(ember_shared SHARED)
target_link_libraries(ember_shared PRIVATE ember_capi_objects ember_lib)
target_include_directories(ember_shared INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
# libember.so.1 (EMBER_API_VERSION) -> libember.so.1.<release>
set_target_properties(ember_shared PROPERTIES
  OUTPUT_NAME ember
  EXPORT_NAME ember
  SOVERSION ${EMBER_API_VERSION}
  VERSION ${EMBER_API_VERSION}.${PROJECT_VERSION}
  LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/ember.map)
target_link_options(ember_shared PRIVATE
  "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/ember.map")
if(NOT EMBER_SANITIZE)
  target_link_options(ember_shared PRIVATE "LINKER:--no-undefined")
endif()
ember_warnings(ember_shared)

# Components, the Debian packages of cmake/EmberPackage.cmake: runtime
# (libember.so.1), dev (header, libember.so link, pkg-config, CMake) and cli.
install(TARGETS ember_shared EXPORT emberTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(TARGETS ember_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
install(FILES ${PROJECT_SOURCE_DIR}/include/ember.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT dev)

# pkg-config: the file finds the prefix from its own place, so the tree can be
# installed with `cmake --install --prefix` anywhere, or moved.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(EMBER_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(EMBER_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH EMBER_PC_UP "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  string(REGEX REPLACE "/$" "" EMBER_PC_UP "${EMBER_PC_UP}")
  set(EMBER_PC_PREFIX "\${pcfiledir}/${EMBER_PC_UP}")
  set(EMBER_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(EMBER_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(EMBER_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/ember.pc.in ${PROJECT_BINARY_DIR}/ember.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ember.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT dev)

# CMake: find_package(ember) gives the imported target ember::ember.
set(EMBER_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ember)
install(EXPORT emberTargets NAMESPACE ember:: DESTINATION ${EMBER_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/emberConfig.cmake.in
  ${PROJECT_BINARY_DIR}/emberConfig.cmake INSTALL_DESTINATION ${EMBER_CMAKE_DIR})
# Before 1.0 a minor release may change the API (EMBER_API_VERSION says when).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/emberConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/emberConfig.cmake ${PROJECT_BINARY_DIR}/emberConfigVersion.cmake
  DESTINATION ${EMBER_CMAKE_DIR} COMPONENT dev)
