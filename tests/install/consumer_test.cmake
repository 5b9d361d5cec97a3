# The install tests (tests/CMakeLists.txt), run as `cmake -D... -P`:
#
#   MODE=install       cmake --install BUILD_DIR into a fresh PREFIX; checks the
#                      files are there and that libember.so exports ember_* only
#   MODE=pkg-config    builds examples/stream.c and examples/chat.c with the
#                      compiler and `pkg-config --cflags --libs ember` from
#                      PREFIX, runs them
#   MODE=find_package  builds it with the CMake project in this folder
#                      (find_package(ember), ember::ember), runs it
#
# The programs see the installed tree only: PREFIX/include and PREFIX/lib.
# SANITIZE: the build's sanitizers, which a program linking a sanitized
# libember.so must be built with too.
cmake_minimum_required(VERSION 3.18)

function(run)  # run(<command>...): the command must succeed; its output is shown
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("$ ${ARGV}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGV}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

# Runs the built example on the tiny model and checks what it printed.
function(run_example program)
  run(${program} ${MODEL} "Once upon a time" 8)
  if(NOT run_output MATCHES "^Once upon a time")
    message(FATAL_ERROR "${program} did not stream the completion: '${run_output}'")
  endif()
endfunction()

set(san_flags "")
if(SANITIZE)
  set(san_flags -fsanitize=${SANITIZE} -fno-omit-frame-pointer)
endif()
set(libdir ${PREFIX}/${LIBDIR})

if(MODE STREQUAL "install")
  file(REMOVE_RECURSE ${PREFIX})
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
  foreach(f bin/ember include/ember.h ${LIBDIR}/libember.so ${LIBDIR}/pkgconfig/ember.pc
      ${LIBDIR}/cmake/ember/emberConfig.cmake ${LIBDIR}/cmake/ember/emberConfigVersion.cmake
      ${LIBDIR}/cmake/ember/emberTargets.cmake)
    if(NOT EXISTS ${PREFIX}/${f})
      message(FATAL_ERROR "cmake --install did not install ${f}")
    endif()
  endforeach()
  # libember.so exports the C API and nothing else: every function ember.h
  # declares, and no symbol that is not ember_*.
  run(${NM} -D --defined-only ${libdir}/libember.so)
  string(REPLACE "\n" ";" lines "${run_output}")
  set(exported "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^[0-9a-fA-F]* *[A-Za-z] ([^ ]+)$")
      set(sym ${CMAKE_MATCH_1})
      if(NOT sym MATCHES "^ember_")
        message(FATAL_ERROR "libember.so exports '${sym}', which is not in the C API")
      endif()
      list(APPEND exported ${sym})
    endif()
  endforeach()
  file(READ ${PREFIX}/include/ember.h header)
  string(REGEX MATCHALL "[a-z_0-9]+\\*? (ember_[a-z_0-9]+)\\(" declarations "${header}")
  set(declared "")
  foreach(d IN LISTS declarations)
    string(REGEX REPLACE ".* (ember_[a-z_0-9]+)\\($" "\\1" name "${d}")
    list(APPEND declared ${name})
    if(NOT name IN_LIST exported)
      message(FATAL_ERROR "ember.h declares ${name}, which libember.so does not export")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES declared)
  list(LENGTH declared n_declared)
  list(LENGTH exported n_exported)
  if(n_declared LESS 30)
    message(FATAL_ERROR "found only ${n_declared} function declarations in ember.h")
  endif()
  message("libember.so exports ${n_exported} symbols, all ember_*, covering the ${n_declared} "
    "functions ember.h declares")

elseif(MODE STREQUAL "pkg-config")
  file(REMOVE_RECURSE ${WORK})
  file(MAKE_DIRECTORY ${WORK})
  set(ENV{PKG_CONFIG_PATH} ${libdir}/pkgconfig)
  set(ENV{PKG_CONFIG_LIBDIR} ${libdir}/pkgconfig)  # nothing from the system
  run(${PKG_CONFIG} --modversion ember)
  run(${PKG_CONFIG} --cflags --libs ember)
  separate_arguments(flags UNIX_COMMAND "${run_output}")
  run(${CC} -std=c99 -Wall -Wextra -pedantic -Werror ${san_flags}
    ${SOURCE_DIR}/examples/stream.c ${flags} -Wl,-rpath,${libdir} -o ${WORK}/stream)
  run_example(${WORK}/stream)
  # The terminal chat, fed two messages and a /reset (a plain-text template:
  # the tiny model's vocabulary has no chat markers).
  run(${CC} -std=c99 -Wall -Wextra -pedantic -Werror ${san_flags}
    ${SOURCE_DIR}/examples/chat.c ${flags} -Wl,-rpath,${libdir} -o ${WORK}/chat)
  execute_process(COMMAND ${WORK}/chat --template ${SOURCE_DIR}/tests/install/plain_chat.jinja
    ${MODEL} "Be brief."
    INPUT_FILE ${SOURCE_DIR}/tests/install/chat_input.txt
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("$ chat --template plain_chat.jinja MODEL < chat_input.txt\n${out}${err}")
  string(REGEX MATCHALL "tokens, [0-9]+ computed for the prompt" replies "${out}")
  list(LENGTH replies n_replies)
  if(NOT rc EQUAL 0 OR NOT n_replies EQUAL 2)
    message(FATAL_ERROR "examples/chat.c: exit ${rc}, ${n_replies} replies instead of 2")
  endif()

elseif(MODE STREQUAL "find_package")
  file(REMOVE_RECURSE ${WORK})
  string(REPLACE ";" " " san "${san_flags}")
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install -B ${WORK} -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=${CC} -DCMAKE_PREFIX_PATH=${PREFIX}
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
    "-DCMAKE_C_FLAGS=${san}" "-DCMAKE_EXE_LINKER_FLAGS=${san}"
    -DEMBER_EXAMPLE_SOURCE=${SOURCE_DIR}/examples/stream.c)
  # The package found must be the installed one.
  file(STRINGS ${WORK}/CMakeCache.txt ember_dir REGEX "^ember_DIR:")
  if(NOT ember_dir MATCHES "=${libdir}/cmake/ember$")
    message(FATAL_ERROR "find_package(ember) found '${ember_dir}', not ${libdir}/cmake/ember")
  endif()
  run(${CMAKE_COMMAND} --build ${WORK})
  run_example(${WORK}/stream)

else()
  message(FATAL_ERROR "MODE must be install, pkg-config or find_package (got '${MODE}')")
endif()
