# `cmake --install`: headers under include/kgen (sources include them as
# "dsl/...", "runtime/..."), the libraries, kgen and kgen-opt, and the CMake
# package (lib/cmake/kgen) with kgen_add_library. The same kgen:: names
# exist in this tree, so kgen_add_library works here too.
include(CMakePackageConfigHelpers)

set(kgen_exported kgen_dsl kgen_runtime kgen_runtime_shared kgen_runtime_c
    kgen_reference)
set_target_properties(kgen_reference PROPERTIES EXPORT_NAME reference)
set_target_properties(kgen_dsl PROPERTIES EXPORT_NAME dsl)
set_target_properties(kgen_runtime PROPERTIES EXPORT_NAME runtime_internal)
set_target_properties(kgen_runtime_shared PROPERTIES EXPORT_NAME runtime)
set_target_properties(kgen_runtime_c PROPERTIES EXPORT_NAME runtime_static)
add_library(kgen::dsl ALIAS kgen_dsl)
add_library(kgen::runtime ALIAS kgen_runtime_shared)
add_library(kgen::runtime_static ALIAS kgen_runtime_c)
target_include_directories(kgen_dsl PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/kgen>)
install(DIRECTORY dsl/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kgen/dsl
        FILES_MATCHING PATTERN "*.h")
install(FILES runtime/kgen_runtime.h runtime/KgenRuntime.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kgen/runtime)

if(KGEN_ENABLE_MLIR)
  add_library(kgen_compiler INTERFACE)
  target_link_libraries(kgen_compiler INTERFACE KgenPipeline)
  set_target_properties(kgen_compiler PROPERTIES EXPORT_NAME compiler)
  set_target_properties(KgenDialect PROPERTIES EXPORT_NAME codegen_dialect)
  set_target_properties(KgenImport PROPERTIES EXPORT_NAME codegen_import)
  set_target_properties(KgenTransforms PROPERTIES EXPORT_NAME codegen_transforms)
  set_target_properties(KgenPipeline PROPERTIES EXPORT_NAME codegen_pipeline)
  set_target_properties(kgen_generator PROPERTIES EXPORT_NAME generator)
  set_target_properties(kgen_generator_main PROPERTIES
                        EXPORT_NAME generator_main)
  set_target_properties(kgen_ops_archive PROPERTIES EXPORT_NAME ops_archive)
  set_target_properties(kgen_ops PROPERTIES EXPORT_NAME ops)
  foreach(t kgen_compiler kgen_generator kgen_generator_main kgen_ops)
    get_target_property(n ${t} EXPORT_NAME)
    add_library(kgen::${n} ALIAS ${t})
  endforeach()
  foreach(t KgenPipeline kgen_generator)
    target_include_directories(${t} PUBLIC
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/kgen>)
  endforeach()
  list(APPEND kgen_exported kgen_compiler KgenDialect KgenImport
       KgenTransforms KgenPipeline kgen_generator kgen_generator_main
       kgen_ops_archive kgen_ops)
  install(FILES codegen/Pipeline/Pipeline.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kgen/codegen/Pipeline)
  install(FILES tools/kgen/Generator.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kgen/tools/kgen)
  install(TARGETS kgen kgen-opt RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # The names kgen_add_library checks at configure time, from kgen itself.
  set(kgen_names ${PROJECT_BINARY_DIR}/kgenNames.cmake)
  add_custom_command(OUTPUT ${kgen_names}
    COMMAND ${CMAKE_COMMAND} -DKGEN=$<TARGET_FILE:kgen> -DOUT=${kgen_names}
            -P ${PROJECT_SOURCE_DIR}/cmake/WriteNames.cmake
    DEPENDS kgen ${PROJECT_SOURCE_DIR}/cmake/WriteNames.cmake VERBATIM)
  add_custom_target(kgen_names ALL DEPENDS ${kgen_names})
  install(FILES ${kgen_names} DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kgen)
endif()

install(TARGETS ${kgen_exported} EXPORT kgenTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set(kgen_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/kgen)
install(EXPORT kgenTargets NAMESPACE kgen:: DESTINATION ${kgen_cmake_dir})
configure_package_config_file(cmake/kgenConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kgenConfig.cmake INSTALL_DESTINATION ${kgen_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kgenConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kgenConfig.cmake
        ${PROJECT_BINARY_DIR}/kgenConfigVersion.cmake
        cmake/KgenAddLibrary.cmake DESTINATION ${kgen_cmake_dir})
# Relocatable: the prefix is found from the .pc file's own folder, so an
# install with `cmake --install --prefix DIR` works too.
file(RELATIVE_PATH KGEN_PC_TO_PREFIX
     "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file(cmake/kgen-runtime.pc.in
               ${PROJECT_BINARY_DIR}/kgen-runtime.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kgen-runtime.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
