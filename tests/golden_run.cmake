# Runs train_lm with the flags a golden run file records and compares the results with
# compare_run (bit-identical numbers).
#   cmake -DTRAIN_LM=... -DCOMPARE=... -DGOLDEN=file.json -DCORPUS=... -DOUT=dir [-DRELAXED=ON]
#         -P golden_run.cmake                 RELAXED: within 1e-4 (compare_run --relaxed)
file(READ ${GOLDEN} golden)
string(JSON flags GET "${golden}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
get_filename_component(name ${GOLDEN} NAME_WE)
set(result ${OUT}/${name}.json)
execute_process(COMMAND ${TRAIN_LM} --corpus-file ${CORPUS} ${flags} --results ${result}
                RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "train_lm failed (${code}):\n${err}")
endif()
set(relaxed)
if(RELAXED)
  set(relaxed --relaxed)
endif()
execute_process(COMMAND ${COMPARE} ${GOLDEN} ${result} ${relaxed} RESULT_VARIABLE code)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "${name}: the run differs from the golden run")
endif()
