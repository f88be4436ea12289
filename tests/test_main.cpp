// The one translation unit that defines Boost.Test's main(); suites name themselves with
// BOOST_AUTO_TEST_SUITE.
#define BOOST_TEST_MODULE tapegrad
#include <boost/test/unit_test.hpp>
