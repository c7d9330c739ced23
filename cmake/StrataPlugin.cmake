# strata_add_plugin(KIND backend|journal|placement|frontend NAME n SOURCES ... [LIBS ...])
#
# Builds libstrata_<kind>_<name>.so into ${STRATA_PLUGIN_OUTPUT_DIR}. Plugins
# link against the SDK headers only (never core), are compiled with hidden
# visibility and a version script, so that the entry symbol is the only thing
# they export, and static libraries linked into them stay private.
set(STRATA_PLUGIN_VERSION_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/plugin.map)

function(strata_add_plugin)
  cmake_parse_arguments(P "" "KIND;NAME" "SOURCES;LIBS" ${ARGN})
  set(target strata_${P_KIND}_${P_NAME})
  add_library(${target} MODULE ${P_SOURCES})
  target_link_libraries(${target} PRIVATE strata::sdk ${P_LIBS})
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME ${target}
    LIBRARY_OUTPUT_DIRECTORY ${STRATA_PLUGIN_OUTPUT_DIR}
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${target} PRIVATE
    -Wl,--version-script=${STRATA_PLUGIN_VERSION_SCRIPT}
    -Wl,--exclude-libs,ALL
    -Wl,--no-undefined)
  install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/strata/plugins)
  set_property(GLOBAL APPEND PROPERTY STRATA_PLUGIN_TARGETS ${target})
endfunction()
