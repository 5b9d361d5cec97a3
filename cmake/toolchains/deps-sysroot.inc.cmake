# Included by the toolchain files: Debian's libraries for the target, unpacked
# by scripts/cross-sysroot.sh into EMBER_DEPS_SYSROOT, for the full build
# (runtime, libember.so, the CLI). Without it only -DEMBER_KERNELS_ONLY=ON
# builds (the kernels need nothing beyond the cross compiler).
#
# In: EMBER_DEPS_SYSROOT (a folder), EMBER_CROSS_TRIPLET (aarch64-linux-gnu ...).
set(_ember_d "${EMBER_DEPS_SYSROOT}")
set(_ember_t "${EMBER_CROSS_TRIPLET}")
list(APPEND CMAKE_FIND_ROOT_PATH "${_ember_d}")
# pkg-config reads the target's .pc files only, and prefixes their paths.
set(ENV{PKG_CONFIG_LIBDIR} "${_ember_d}/usr/lib/${_ember_t}/pkgconfig:${_ember_d}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${_ember_d}")
unset(ENV{PKG_CONFIG_PATH})
# Headers: pkg-config drops -I/usr/include, and Debian puts some in the
# multiarch folder (openssl's configuration, which cpp-httplib includes).
foreach(_ember_lang C CXX)
  set(CMAKE_${_ember_lang}_STANDARD_INCLUDE_DIRECTORIES
    "${_ember_d}/usr/include/${_ember_t}" "${_ember_d}/usr/include")
endforeach()
# The linker finds the libraries' own dependencies (libedit -> libtinfo, libbsd
# -> libmd) there, after the cross toolchain's C and C++ runtime.
set(_ember_rpath_link "-Wl,-rpath-link,/usr/${_ember_t}/lib:${_ember_d}/lib/${_ember_t}:${_ember_d}/usr/lib/${_ember_t}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${_ember_rpath_link}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${_ember_rpath_link}")
set(EMBER_QEMU_LIBRARY_PATH "/usr/${_ember_t}/lib:${_ember_d}/lib/${_ember_t}:${_ember_d}/usr/lib/${_ember_t}")
