# Debian packages with CPack: `cpack` in a build folder configured with
# -DCMAKE_INSTALL_PREFIX=/usr (so that the library goes to the multiarch folder
# /usr/lib/<triplet>) writes, for the build's architecture (amd64, arm64, armhf):
#
#   libember1_<version>-1_<arch>.deb     /usr/lib/<triplet>/libember.so.1 (the C API)
#   libember-dev_<version>-1_<arch>.deb  ember.h, libember.so, ember.pc, find_package(ember)
#   ember_<version>-1_<arch>.deb         /usr/bin/ember and its man page ember.1
#
# as Debian splits a library: the runtime package named after the soname
# (libember.so.1), a -dev package that depends on exactly that version, and
# the program. The CLI links the library statically (EmberInstall.cmake), so
# `ember` does not need libember1.
#
# Depends: dpkg-shlibdeps computes them from the binaries. Natively it reads
# the host's dpkg database. Cross builds point it at the deps sysroot that
# scripts/cross-sysroot.sh unpacked (EMBER_DEPS_SYSROOT, the toolchain files):
# that folder has a dpkg database of the arm64/armhf packages with their
# shlibs and symbols files, so the result is what a native arm64/armhf build
# would get (see CPACK_PROJECT_CONFIG_FILE below).
#
# The man page is made at build time from the help of the ember just built
# (EmberManPage.cmake); cross builds run it under the toolchain's qemu-user.

# --- the man page ------------------------------------------------------------
option(EMBER_MAN_PAGE "Generate the man page ember.1 from ember --help at build time" ON)
set(EMBER_MAN_PAGE_BUILT OFF)
if(EMBER_MAN_PAGE AND NOT EMBER_SANITIZE AND
   (NOT CMAKE_CROSSCOMPILING OR CMAKE_CROSSCOMPILING_EMULATOR))
  string(REPLACE ";" "|" ember_emulator "${CMAKE_CROSSCOMPILING_EMULATOR}")
  find_program(EMBER_GZIP gzip)
  set(ember_man ${PROJECT_BINARY_DIR}/man/ember.1)
  set(ember_man_installed ${ember_man})
  set(ember_man_commands COMMAND ${CMAKE_COMMAND} -DEMBER=$<TARGET_FILE:ember_cli>
    "-DEMULATOR=${ember_emulator}" -DVERSION=${PROJECT_VERSION} -DOUT=${ember_man}
    -P ${PROJECT_SOURCE_DIR}/cmake/EmberManPage.cmake)
  if(EMBER_GZIP)  # Debian installs man pages gzip'ed, without a time stamp (-n)
    set(ember_man_installed ${ember_man}.gz)
    list(APPEND ember_man_commands COMMAND ${EMBER_GZIP} -9nf -k ${ember_man})
  endif()
  add_custom_command(OUTPUT ${ember_man_installed}
    ${ember_man_commands}
    DEPENDS ember_cli ${PROJECT_SOURCE_DIR}/cmake/EmberManPage.cmake
    COMMENT "Generating the man page ember.1 from ember --help"
    VERBATIM)
  add_custom_target(ember_man_page ALL DEPENDS ${ember_man_installed})
  install(FILES ${ember_man_installed} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT cli)
  set(EMBER_MAN_PAGE_BUILT ON)
elseif(EMBER_MAN_PAGE AND NOT EMBER_SANITIZE)
  message(STATUS "ember: no man page (cross-compiling without CMAKE_CROSSCOMPILING_EMULATOR)")
endif()

# --- copyright files (Debian policy 12.5: /usr/share/doc/<package>/copyright) ---
file(READ ${PROJECT_SOURCE_DIR}/LICENSE ember_license)
string(REGEX MATCH "Copyright \\(c\\) ([^\n]*)" _ ${ember_license})
set(ember_copyright_holder "${CMAKE_MATCH_1}")
string(REGEX REPLACE "^MIT License\n\n[^\n]*\n\n" "" ember_license_text "${ember_license}")
string(REGEX REPLACE "\n\n" "\n.\n" ember_license_text "${ember_license_text}")
string(REGEX REPLACE "\n([^\n])" "\n \\1" ember_license_text " ${ember_license_text}")
string(STRIP "${ember_license_text}" ember_license_text)
set(ember_copyright "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ember

Files: *
Copyright: ${ember_copyright_holder}
License: Expat
 ${ember_license_text}
")
set(EMBER_DEB_RUNTIME libember${EMBER_API_VERSION})
foreach(pkg ${EMBER_DEB_RUNTIME} libember-dev ember)
  file(WRITE ${PROJECT_BINARY_DIR}/doc/${pkg}/copyright "${ember_copyright}")
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/doc/${EMBER_DEB_RUNTIME}/copyright
  DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${EMBER_DEB_RUNTIME} COMPONENT runtime)
install(FILES ${PROJECT_BINARY_DIR}/doc/libember-dev/copyright
  DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/libember-dev COMPONENT dev)
install(FILES ${PROJECT_BINARY_DIR}/doc/ember/copyright
  DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/ember COMPONENT cli)

# --- CPack -------------------------------------------------------------------
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  message(STATUS "ember: for Debian packages (cpack) configure with -DCMAKE_INSTALL_PREFIX=/usr "
    "(now ${CMAKE_INSTALL_PREFIX}: the library would go to /usr/${CMAKE_INSTALL_LIBDIR})")
endif()
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(EMBER_DEB_ARCH amd64)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set(EMBER_DEB_ARCH arm64)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^arm")
  set(EMBER_DEB_ARCH armhf)
else()
  set(EMBER_DEB_ARCH "")  # CPack asks dpkg
endif()
set(EMBER_PACKAGE_MAINTAINER "ember maintainers <maintainers@users.noreply.a-seed-40509894.example>"
  CACHE STRING "Maintainer field of the Debian packages")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ember)
set(CPACK_PACKAGE_VENDOR "The ember authors")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${EMBER_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "CPU inference engine for GGUF language models")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
set(CPACK_COMPONENTS_ALL runtime dev cli)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${EMBER_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
if(EMBER_DEB_ARCH)
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${EMBER_DEB_ARCH})
endif()
set(ember_deb_version "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")

set(ember_long_description "ember runs large language models in the GGUF format (as llama.cpp
writes them) on the CPU, with its own kernels for x86-64 (AVX2, AVX-512) and
ARM (NEON, dotprod, i8mm) chosen at run time.")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${EMBER_DEB_RUNTIME})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "CPU inference engine for GGUF language models (C library)
${ember_long_description}
.
This package has the shared library of ember's C API (libember.so.1).")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libember-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${EMBER_DEB_RUNTIME} (= ${ember_deb_version})")
set(CPACK_COMPONENT_DEV_DESCRIPTION "CPU inference engine for GGUF language models (development files)
${ember_long_description}
.
This package has the C header ember.h, the libember.so link, the pkg-config
module 'ember' and the CMake package (find_package(ember), ember::ember).")

set(CPACK_DEBIAN_CLI_PACKAGE_NAME ember)
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_CLI_PACKAGE_SHLIBDEPS ON)
set(CPACK_COMPONENT_CLI_DESCRIPTION "CPU inference engine for GGUF language models (command line)
${ember_long_description}
.
This package has the ember command: run, chat, serve (an OpenAI-compatible
HTTP server), bench, perplexity, quantize, tokenize, info and more.")

# Cross builds: dpkg-shlibdeps reads the deps sysroot's dpkg database and
# libraries, and the target's objdump. Set in the environment of cpack itself
# (this file is read when cpack runs), which dpkg-shlibdeps inherits.
if(CMAKE_CROSSCOMPILING AND EMBER_DEPS_SYSROOT)
  set(ember_t ${CMAKE_LIBRARY_ARCHITECTURE})
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS
    ${EMBER_DEPS_SYSROOT}/crt/lib/${ember_t} ${EMBER_DEPS_SYSROOT}/crt/usr/lib/${ember_t}
    ${EMBER_DEPS_SYSROOT}/lib/${ember_t} ${EMBER_DEPS_SYSROOT}/usr/lib/${ember_t})
  file(WRITE ${PROJECT_BINARY_DIR}/EmberCPackCross.cmake
    "set(ENV{DPKG_ADMINDIR} \"${EMBER_DEPS_SYSROOT}/var/lib/dpkg\")\n"
    "set(ENV{DEB_HOST_ARCH} \"${EMBER_DEB_ARCH}\")\n")
  set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/EmberCPackCross.cmake)
elseif(CMAKE_CROSSCOMPILING)
  message(STATUS "ember: cross build without EMBER_DEPS_SYSROOT: cpack cannot compute Depends")
endif()

include(CPack)
