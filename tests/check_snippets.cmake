# Fails unless the block between "// BEGIN README EXAMPLE" (or DOC EXAMPLE) and its END marker in
# SOURCE appears verbatim in DOC, after removing the markers' own indentation.
#   cmake -DSOURCE=file -DDOC=file.md -P check_snippets.cmake
file(READ "${SOURCE}" source)
file(READ "${DOC}" doc)
string(REGEX MATCH "([ ]*)// BEGIN (README|DOC) EXAMPLE\n(.*)\n[ ]*// END (README|DOC) EXAMPLE" _ "${source}")
set(indent "${CMAKE_MATCH_1}")
set(block "${CMAKE_MATCH_3}")
if(block STREQUAL "")
  message(FATAL_ERROR "${SOURCE}: no README or DOC EXAMPLE block")
endif()
if(NOT indent STREQUAL "")
  string(REGEX REPLACE "(^|\n)${indent}" "\\1" block "${block}")
endif()
string(FIND "${doc}" "${block}" where)
if(where EQUAL -1)
  message(FATAL_ERROR "${DOC} does not show the example of ${SOURCE} verbatim:\n${block}")
endif()
message(STATUS "${DOC} shows the example of ${SOURCE}")
