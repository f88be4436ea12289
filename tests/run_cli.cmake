# Runs one command line and checks its exit code and output.
#   cmake -DCOMMAND="prog;arg;..." -DEXPECT=fail|ok -DMATCH=regex -P run_cli.cmake
# EXPECT=fail: the exit code must be non-zero (and not a crash: no signal), and stderr must
# match MATCH. EXPECT=ok: exit 0 and stdout+stderr (stdout alone with -DSTDOUT_ONLY=1) must match MATCH.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(EXPECT STREQUAL "fail")
  if(code EQUAL 0)
    message(FATAL_ERROR "expected a failure, got exit 0\nstdout: ${out}\nstderr: ${err}")
  endif()
  if(NOT code MATCHES "^[0-9]+$" OR code GREATER 127)
    message(FATAL_ERROR "crashed (${code}) instead of a clean error\nstderr: ${err}")
  endif()
  if(NOT err MATCHES "${MATCH}")
    message(FATAL_ERROR "stderr does not match '${MATCH}':\n${err}")
  endif()
else()
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "exit ${code}\nstdout: ${out}\nstderr: ${err}")
  endif()
  if(STDOUT_ONLY)  # -DSTDOUT_ONLY=1: MATCH applies to stdout alone
    set(err "")
  endif()
  if(NOT "${out}${err}" MATCHES "${MATCH}")
    message(FATAL_ERROR "output does not match '${MATCH}':\n${out}\n${err}")
  endif()
endif()
