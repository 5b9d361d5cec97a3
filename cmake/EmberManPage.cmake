# Writes the man page ember.1 from the built CLI's own help: `ember --help`
# gives the commands, `ember COMMAND --help` each command's synopsis and
# options. Run at build time (cmake/EmberPackage.cmake) as
#
#   cmake -DEMBER=path/to/ember -DEMULATOR="qemu-aarch64-static|-L|..." \
#         -DVERSION=0.1.0 -DOUT=ember.1 -P cmake/EmberManPage.cmake
#
# EMULATOR ('|'-separated, may be empty) runs a cross-built CLI: the toolchain
# files' qemu-user command. The help text is the same on every architecture, so
# a cross build could also take it from a native build; running the binary that
# goes into the package checks that this binary starts, and keeps the page true
# to it without a second build.
cmake_minimum_required(VERSION 3.18)

string(REPLACE "|" ";" emulator "${EMULATOR}")

function(ember_help out_var)  # ember_help(<var> [args...]): the CLI's stdout
  execute_process(COMMAND ${emulator} ${EMBER} ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ember ${ARGN}: exit ${rc}: ${err}")
  endif()
  # Lines become list items below: keep the text's own ';' (and brackets,
  # which would stop CMake from splitting lists) out of the way until written.
  string(REPLACE ";" "<semicolon>" out "${out}")
  string(REPLACE "[" "<lbracket>" out "${out}")
  string(REPLACE "]" "<rbracket>" out "${out}")
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# roff: backslashes, hyphens (\- is a minus sign, which options need for
# copying), and a line start that roff would read as a request.
function(roff out_var text)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REPLACE "-" "\\-" text "${text}")
  string(REGEX REPLACE "^([.'])" "\\\\&\\1" text "${text}")
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

ember_help(top --help)
string(REPLACE "\n" ";" top_lines "${top}")
set(commands "")
set(command_list "")
set(in_commands OFF)
foreach(line IN LISTS top_lines)
  if(line STREQUAL "commands:")
    set(in_commands ON)
  elseif(in_commands AND line MATCHES "^  ([a-z]+) +(.+)$")
    list(APPEND commands ${CMAKE_MATCH_1})
    roff(what "${CMAKE_MATCH_2}")
    string(APPEND command_list ".TP\n.B ${CMAKE_MATCH_1}\n${what}\n")
  elseif(in_commands AND line STREQUAL "")
    set(in_commands OFF)
  endif()
endforeach()
list(LENGTH commands n_commands)
if(n_commands LESS 5)
  message(FATAL_ERROR "found ${n_commands} commands in 'ember --help':\n${top}")
endif()

set(page "")
string(APPEND page [[.\" Generated at build time by cmake/EmberManPage.cmake from the help of ember itself.
]])
string(APPEND page ".TH EMBER 1 \"\" \"ember ${VERSION}\" \"User Commands\"\n")
string(APPEND page [[.SH NAME
ember \- run GGUF language models on the CPU
.SH SYNOPSIS
.B ember
.I COMMAND
.RI [ options ]
.br
.B ember
.B \-\-help
|
.B \-\-version
.br
.B ember
.I COMMAND
.B \-\-help
.SH DESCRIPTION
.B ember
is a CPU inference engine for large language models in the GGUF format (as
llama.cpp writes them): it generates text, chats with instruct models, serves an
OpenAI-compatible HTTP API, measures speed and perplexity, and quantizes models.
Options take their value as the next argument or, for long options, after
.BR = ;
each command's options are listed below.
.SH COMMANDS
]])
string(APPEND page "${command_list}")
string(APPEND page ".SH \"COMMAND OPTIONS\"\n")

foreach(cmd IN LISTS commands)
  ember_help(help ${cmd} --help)
  string(REPLACE "\n" ";" lines "${help}")
  string(APPEND page ".SS \"ember ${cmd}\"\n")
  set(n_options 0)
  foreach(line IN LISTS lines)
    if(line MATCHES "^usage: (.*)$")
      roff(usage "${CMAKE_MATCH_1}")
      string(APPEND page ".nf\n${usage}\n.fi\n")
    elseif(line MATCHES "^  +-")
      # "  %-28s %s": the option (alias, name, value) in 28 columns, then its
      # help; a longer option is followed by one space.
      string(SUBSTRING "${line}" 2 28 left)
      string(STRIP "${left}" left)
      string(LENGTH "${left}" left_length)
      if(left_length LESS 28)
        string(SUBSTRING "${line}" 31 -1 what)
      elseif(line MATCHES "^  +((-[A-Za-z]+, )?--?[A-Za-z0-9-]+( [^ ]+)?) +(.*)$")
        set(left "${CMAKE_MATCH_1}")
        set(what "${CMAKE_MATCH_4}")
      else()
        message(FATAL_ERROR "ember ${cmd} --help: cannot read the option line '${line}'")
      endif()
      # Bold option names, italic value names.
      set(words "")
      string(REPLACE " " ";" parts "${left}")
      foreach(part IN LISTS parts)
        roff(p "${part}")
        if(part MATCHES "^-")
          list(APPEND words "\\fB${p}\\fR")
        else()
          list(APPEND words "\\fI${p}\\fR")
        endif()
      endforeach()
      string(REPLACE ";" " " left_roff "${words}")
      roff(what "${what}")
      string(APPEND page ".TP\n${left_roff}\n${what}\n")
      math(EXPR n_options "${n_options} + 1")
    elseif(NOT line STREQUAL "" AND NOT line STREQUAL "options:")
      roff(text "${line}")
      string(APPEND page ".PP\n${text}\n")
    endif()
  endforeach()
  if(n_options EQUAL 0)
    message(FATAL_ERROR "no options in 'ember ${cmd} --help':\n${help}")
  endif()
endforeach()

string(APPEND page [[.SH ENVIRONMENT
.TP
.B EMBER_MODELS
the folder of the default model (without
.BR \-m ):
SmolLM2\-135M\-Instruct.Q4_1.gguf; default
.IR ~/.cache/ember/models .
.TP
.B EMBER_CACHE_DIR
where the measured memory bandwidth is kept (for
.BR "\-t auto" );
default
.IR ~/.cache/ember .
.TP
.B EMBER_ISA
forces a kernel variant instead of the best one the CPU has.
.TP
.BR OMP_PROC_BIND ", " OMP_PLACES ", " GOMP_CPU_AFFINITY
when set, ember leaves thread placement to OpenMP.
.SH EXIT STATUS
0 on success; 1 on an error, with one line
.B "ember: error: ..."
on standard error; 2 without a command.
.SH "SEE ALSO"
The C API: /usr/include/ember.h (package libember\-dev), pkg\-config module
.BR ember .
The project's docs/ folder: performance, deployment (ember serve under
systemd) and the Raspberry Pi guide (docs/RASPBERRY_PI.md).
]])

string(REPLACE "<semicolon>" ";" page "${page}")
string(REPLACE "<lbracket>" "[" page "${page}")
string(REPLACE "<rbracket>" "]" page "${page}")
file(WRITE "${OUT}" "${page}")
message(STATUS "ember.1: ${n_commands} commands")
