// Everything a user of the autograd engine needs, in one include.
#pragma once

#include "autograd/gradcheck.hpp"
#include "autograd/io.hpp"
#include "autograd/ops.hpp"
#include "autograd/parallel.hpp"
#include "autograd/random.hpp"
#include "autograd/tape.hpp"
#include "autograd/tensor.hpp"
