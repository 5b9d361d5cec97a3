# Warnings, sanitizers and per-file ISA flags.

function(ember_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  # GCC 12 reports -Wrestrict / -Wstringop-overflow inside libstdc++'s own
  # std::string and std::vector code when they are inlined (GCC bugs 105329,
  # 105651): false positives that -Werror would turn into build failures.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict -Wno-stringop-overflow)
  endif()
  if(EMBER_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

if(EMBER_SANITIZE)
  add_compile_options(-fsanitize=${EMBER_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${EMBER_SANITIZE})
endif()

# ISA flags go on single source files, chosen by the file name's suffix, so
# the default build runs on any CPU of its architecture and the kernel table
# picks variants at run time (docs/DESIGN.md §5).
set(EMBER_X86 OFF)
set(EMBER_ARM64 OFF)
set(EMBER_ARM32 OFF)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
  set(EMBER_X86 ON)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(EMBER_ARM64 ON)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "arm")
  set(EMBER_ARM32 ON)
endif()

function(ember_set_isa_flags)
  foreach(src ${ARGN})
    get_filename_component(name ${src} NAME_WE)
    if(EMBER_X86)
      # GCC 12's _mm512_undefined_* trip -Wmaybe-uninitialized (GCC bug 105593).
      if(name MATCHES "_avx512vnni$")
        set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS
          "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx512vnni;-mfma;-mf16c;-mbmi2;-Wno-maybe-uninitialized")
      elseif(name MATCHES "_avx512$")
        set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS
          "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mfma;-mf16c;-mbmi2;-Wno-maybe-uninitialized")
      elseif(name MATCHES "_avx2$")
        set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c;-mbmi2")
      endif()
    elseif(EMBER_ARM32)
      # vcvt_f32_f16 on ARMv7 needs the __fp16 type, which GCC declares only
      # with a half-precision format chosen (the float GEMM's f16 weights).
      if(name MATCHES "^fgemm_neon$")
        set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "-mfp16-format=ieee")
      endif()
    elseif(EMBER_ARM64)
      if(name MATCHES "_neon_i8mm$")
        set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "-march=armv8.2-a+dotprod+i8mm")
      elseif(name MATCHES "_neon_dot$")
        set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "-march=armv8.2-a+dotprod")
      endif()
    endif()
    # RoPE variants promise RopeApply_ref's bits (ops/rope.h): no fusing of
    # x0 * c - x1 * s into an fma, which GCC does by default (also with
    # -std=c++20) wherever the target has FMA: all of AArch64, x86 with -mfma.
    # GCC 12's auto-vectorizer still turns the scalar rotation loop into
    # vfmaddsub under -ffp-contract=off (x86 with -mfma; seen in rope_avx2's
    # tail), hence also -fno-tree-vectorize: the SIMD here is written by hand.
    # Appended, so the ISA flags above stay.
    # The ggml numerics files (ops/ggml_numerics.h) place every fused
    # multiply-add by hand, as std::fma: the same two flags keep the compiler
    # from adding its own.
    if(name MATCHES "^rope" OR name MATCHES "^ggml_")
      set_property(SOURCE ${src} APPEND PROPERTY COMPILE_OPTIONS
        "-ffp-contract=off;-fno-tree-vectorize")
    endif()
    # The file quantizers (quant/quantize*.cpp) compute scales in llama.cpp's
    # float order, so that a file is the same bytes on every machine and
    # equal to llama-quantize's x86-64 output: no contraction into fma.
    if(name MATCHES "^quantize")
      set_property(SOURCE ${src} APPEND PROPERTY COMPILE_OPTIONS "-ffp-contract=off")
    endif()
  endforeach()
endfunction()
