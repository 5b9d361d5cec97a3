# Cross-compiling for 32-bit ARM Linux with NEON (ARMv7-A, hard float).
# Debian's default armhf target is vfpv3-d16 without NEON, hence the flags.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_CXX_COMPILER arm-linux-gnueabihf-g++)
set(CMAKE_C_FLAGS_INIT "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -mfp16-format=ieee")
set(CMAKE_CXX_FLAGS_INIT "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -mfp16-format=ieee")
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf)
# The full build (runtime, libember.so, CLI) also needs Debian's armhf libraries:
# -DEMBER_DEPS_SYSROOT=DIR after `scripts/cross-sysroot.sh armhf DIR`.
set(EMBER_DEPS_SYSROOT "" CACHE PATH "Debian's target libraries (scripts/cross-sysroot.sh)")
set(EMBER_CROSS_TRIPLET arm-linux-gnueabihf)
set(EMBER_QEMU_LIBRARY_PATH /usr/arm-linux-gnueabihf/lib)
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES EMBER_DEPS_SYSROOT)
if(EMBER_DEPS_SYSROOT)
  include(${CMAKE_CURRENT_LIST_DIR}/deps-sysroot.inc.cmake)
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR timeout 600 qemu-arm-static
    -L /usr/arm-linux-gnueabihf -E LD_LIBRARY_PATH=${EMBER_QEMU_LIBRARY_PATH})
