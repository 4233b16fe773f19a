# kgen_add_library(NAME
#   OPS file.cpp...           op files (each registers ops with KGEN_REGISTER_OP)
#   [BUNDLED op...]           ops that ship with kgen, by name (`kgen list`)
#   [ARCHS sm_80 sm_90 ...]   default: sm_80 sm_90
#   [DTYPES bf16 f16 f32]     default: each op's dtypes
#   [LENGTHS 0 4096 ...]      row lengths to specialize on; 0: the dynamic
#                             kernel (the default)
#   [CUDA_PATH dir]           the CUDA toolkit (libdevice, ptxas); default
#                             KGEN_CUDA_PATH, as kgen was built with
#   [CUBIN AUTO|ON|OFF]       embed ptxas's cubins: where ptxas is found
#                             (AUTO, the default), always, never
#   [RUNTIME SHARED|STATIC|NONE]) the kgen runtime linked (default SHARED;
#                             NONE: the caller links one)
#
# Builds NAME_generator (kgen's command line linked with the op files), runs
# `NAME_generator aot` at build time and makes the static library NAME of the
# generated launchers: include "NAME.h" (C) or "NAME.hpp" (C++). A
# misspelled arch, dtype or bundled op is refused at configure time (the
# installed package has kgen's names); mistakes in the op files (a duplicate
# op, a formula that breaks a DSL rule) stop the build with their line.
function(kgen_add_library name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "RUNTIME;CUBIN;CUDA_PATH"
                        "OPS;BUNDLED;ARCHS;DTYPES;LENGTHS")
  set(usage "kgen_add_library(${name} OPS file.cpp... [BUNDLED op...] "
            "[ARCHS sm_XY...] [DTYPES f32|f16|bf16...] [LENGTHS n...] "
            "[CUDA_PATH dir] [CUBIN AUTO|ON|OFF] [RUNTIME SHARED|STATIC|NONE])")
  string(JOIN "" usage ${usage})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kgen_add_library: unexpected arguments "
                        "'${ARG_UNPARSED_ARGUMENTS}'; usage: ${usage}")
  endif()
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "kgen_add_library: '${name}' must be a C identifier "
                        "(it prefixes the generated functions)")
  endif()
  if(NOT ARG_OPS AND NOT ARG_BUNDLED)
    message(FATAL_ERROR "kgen_add_library(${name}): no ops; usage: ${usage}")
  endif()
  set(sources)
  foreach(file IN LISTS ARG_OPS)
    get_filename_component(path "${file}" ABSOLUTE)
    if(NOT EXISTS "${path}")
      message(FATAL_ERROR "kgen_add_library(${name}): OPS file '${file}' "
                          "does not exist")
    endif()
    list(APPEND sources "${path}")
  endforeach()
  if(NOT ARG_ARCHS)
    set(ARG_ARCHS sm_80 sm_90)
  endif()
  # With the installed package, names are checked now; in kgen's own tree
  # (no kgenNames.cmake yet) the generator checks them when it runs.
  foreach(kind ARCHS DTYPES BUNDLED_OPS)
    string(REPLACE "_OPS" "" arg ${kind})
    foreach(item IN LISTS ARG_${arg})
      if(DEFINED KGEN_${kind} AND NOT item IN_LIST KGEN_${kind})
        string(JOIN ", " list ${KGEN_${kind}})
        string(TOLOWER "${kind}" what)
        string(REPLACE "_" " " what "${what}")
        message(FATAL_ERROR "kgen_add_library(${name}): unknown ${arg} "
                            "'${item}'; kgen's ${what}: ${list}")
      endif()
    endforeach()
  endforeach()
  if(NOT ARG_LENGTHS)
    set(ARG_LENGTHS 0)
  endif()
  if(NOT ARG_RUNTIME)
    set(ARG_RUNTIME SHARED)
  endif()
  if(ARG_RUNTIME STREQUAL "SHARED")
    set(runtime kgen::runtime)
  elseif(ARG_RUNTIME STREQUAL "STATIC")
    set(runtime kgen::runtime_static)
  elseif(ARG_RUNTIME STREQUAL "NONE")
    set(runtime)
  else()
    message(FATAL_ERROR "kgen_add_library(${name}): RUNTIME is SHARED, "
                        "STATIC or NONE, not '${ARG_RUNTIME}'")
  endif()
  if(NOT ARG_CUBIN)
    set(ARG_CUBIN AUTO)
  endif()
  string(TOLOWER "${ARG_CUBIN}" cubin)
  if(NOT cubin MATCHES "^(auto|on|off)$")
    message(FATAL_ERROR "kgen_add_library(${name}): CUBIN is AUTO, ON or "
                        "OFF, not '${ARG_CUBIN}'")
  endif()

  set(dir "${CMAKE_CURRENT_BINARY_DIR}/${name}")
  if(NOT sources) # only bundled ops: the generator needs a source of its own
    set(sources "${dir}/no_user_ops.cpp")
    file(WRITE "${sources}" "// ${name} has no op files of its own.\n")
  endif()
  set(generator ${name}_generator)
  add_executable(${generator} ${sources})
  target_link_libraries(${generator} PRIVATE kgen::generator_main
                        kgen::generator kgen::dsl)
  set(args aot --name ${name} --user-ops)
  if(ARG_BUNDLED)
    target_link_libraries(${generator} PRIVATE kgen::ops)
    string(JOIN "," bundled ${ARG_BUNDLED})
    list(APPEND args --bundled=${bundled})
  endif()
  string(JOIN "," archs ${ARG_ARCHS})
  string(JOIN "," lengths ${ARG_LENGTHS})
  if(NOT ARG_CUDA_PATH)
    set(ARG_CUDA_PATH "${KGEN_CUDA_PATH}")
  endif()
  if(NOT EXISTS "${ARG_CUDA_PATH}/nvvm/libdevice")
    message(FATAL_ERROR "kgen_add_library(${name}): no CUDA toolkit at "
                        "'${ARG_CUDA_PATH}' (it needs nvvm/libdevice); pass "
                        "CUDA_PATH or set KGEN_CUDA_PATH")
  endif()
  list(APPEND args --archs=${archs} --lengths=${lengths} --cubin=${cubin}
       --cuda-path=${ARG_CUDA_PATH})
  if(ARG_DTYPES)
    string(JOIN "," dtypes ${ARG_DTYPES})
    list(APPEND args --dtypes=${dtypes})
  endif()

  add_custom_command(
    OUTPUT "${dir}/${name}.h" "${dir}/${name}.c" "${dir}/${name}.hpp"
    COMMAND ${generator} ${args} -o "${dir}"
    DEPENDS ${generator}
    COMMENT "kgen aot: ${name} (${archs}; lengths ${lengths})"
    VERBATIM)
  add_library(${name} STATIC "${dir}/${name}.c")
  # The launchers are C; a C++-only project compiles them as C++.
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "C" IN_LIST languages)
    set_source_files_properties("${dir}/${name}.c" PROPERTIES LANGUAGE CXX)
  endif()
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${name} PUBLIC "${dir}")
  if(runtime)
    target_link_libraries(${name} PUBLIC ${runtime})
  else() # the runtime's header only
    target_include_directories(${name} PUBLIC
      $<TARGET_PROPERTY:kgen::runtime,INTERFACE_INCLUDE_DIRECTORIES>)
  endif()
endfunction()
