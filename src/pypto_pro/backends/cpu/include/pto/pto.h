// PyPTO CPU backend tile library: everything a generated kernel.cpp includes.
#pragma once
#include "core.h"
#include "tile.h"
#include "cast.h"
#include "vector.h"
#include "memory.h"
#include "sync.h"
#include "scalar.h"
#include "extra.h"
#include "sort.h"
#include "random.h"
#include "fuse.h"
#include "vf.h"
