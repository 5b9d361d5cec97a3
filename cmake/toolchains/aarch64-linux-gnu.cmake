# Cross-compiling for 64-bit ARM Linux (Raspberry Pi 3/4/5, other Cortex-A boards).
# Tests run under qemu-user: -L points the loader at the
# cross sysroot and LD_LIBRARY_PATH keeps it off the host's ld.so.cache (which
# would mix two glibc builds and hang any program that starts a thread).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
# The full build (runtime, libember.so, CLI) also needs Debian's arm64 libraries:
# -DEMBER_DEPS_SYSROOT=DIR after `scripts/cross-sysroot.sh arm64 DIR`.
set(EMBER_DEPS_SYSROOT "" CACHE PATH "Debian's target libraries (scripts/cross-sysroot.sh)")
set(EMBER_CROSS_TRIPLET aarch64-linux-gnu)
set(EMBER_QEMU_LIBRARY_PATH /usr/aarch64-linux-gnu/lib)
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES EMBER_DEPS_SYSROOT)
if(EMBER_DEPS_SYSROOT)
  include(${CMAKE_CURRENT_LIST_DIR}/deps-sysroot.inc.cmake)
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(EMBER_QEMU_CPU "max" CACHE STRING "qemu -cpu for running tests (cortex-a53, cortex-a76, max)")
set(CMAKE_CROSSCOMPILING_EMULATOR timeout 600 qemu-aarch64-static -cpu ${EMBER_QEMU_CPU}
    -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH=${EMBER_QEMU_LIBRARY_PATH})
