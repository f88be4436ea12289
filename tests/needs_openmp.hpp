// A precondition for the tests that compare 1 thread with 2: without OpenMP the ops' loops
// run on one thread whatever the count, so such a comparison could not fail. Boost.Test then
// reports the case as skipped, with this reason, instead of passing it.
//   BOOST_AUTO_TEST_CASE(name, *boost::unit_test::precondition(tg::testing::needs_openmp))
#pragma once

#include <boost/test/unit_test.hpp>

namespace tg::testing {

inline boost::test_tools::assertion_result needs_openmp(boost::unit_test::test_unit_id) {
#if defined(TAPEGRAD_OPENMP)
  return true;
#else
  boost::test_tools::assertion_result skip(false);
  skip.message() << "built without OpenMP (TAPEGRAD_OPENMP): the ops run on one thread "
                    "whatever the count, so 1 and 2 threads cannot differ; skipped";
  return skip;
#endif
}

}  // namespace tg::testing
