# Finds oneDNN (Debian's libdnnl-dev) as the imported target DNNL::dnnl, without its own CMake
# package: Debian's dnnl-config.cmake requires OpenCL's development files (its GPU runtime), which
# tapegrad, using only the CPU matmul primitives, does not need.
#   find_package(dnnl 2.6 MODULE REQUIRED)
find_path(DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
find_library(DNNL_LIBRARY NAMES dnnl)
if(DNNL_INCLUDE_DIR AND EXISTS "${DNNL_INCLUDE_DIR}/oneapi/dnnl/dnnl_version.h")
  file(STRINGS "${DNNL_INCLUDE_DIR}/oneapi/dnnl/dnnl_version.h" dnnl_version_lines
       REGEX "^#define DNNL_VERSION_(MAJOR|MINOR|PATCH) +[0-9]+")
  foreach(part MAJOR MINOR PATCH)
    string(REGEX REPLACE ".*#define DNNL_VERSION_${part} +([0-9]+).*" "\\1" dnnl_${part} "${dnnl_version_lines}")
  endforeach()
  set(dnnl_VERSION "${dnnl_MAJOR}.${dnnl_MINOR}.${dnnl_PATCH}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(dnnl REQUIRED_VARS DNNL_LIBRARY DNNL_INCLUDE_DIR VERSION_VAR dnnl_VERSION)
if(dnnl_FOUND AND NOT TARGET DNNL::dnnl)
  add_library(DNNL::dnnl UNKNOWN IMPORTED)
  set_target_properties(DNNL::dnnl PROPERTIES IMPORTED_LOCATION "${DNNL_LIBRARY}"
                                              INTERFACE_INCLUDE_DIRECTORIES "${DNNL_INCLUDE_DIR}")
endif()
mark_as_advanced(DNNL_INCLUDE_DIR DNNL_LIBRARY)
