# Run at every build (cmake -P): writes OUT with the source tree's commit, and touches it only
# when the text changes, so that an unchanged tree relinks nothing.
#   cmake -DSOURCE_DIR=... -DOUT=... -P build_commit.cmake
set(commit unknown)
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS ${SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE failed ERROR_QUIET)
  if(NOT failed)
    set(commit ${head})
    # Results are written while a study runs; only the code makes a build "dirty".
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} status --porcelain --untracked-files=no
                            -- . :!results
                    OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(changes)
      string(APPEND commit -dirty)
    endif()
  endif()
endif()
set(text "namespace tg::base {\nextern const char* const kBuildCommit;\nconst char* const kBuildCommit = \"${commit}\";\n}\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()
