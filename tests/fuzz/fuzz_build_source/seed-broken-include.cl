#include "nothere.h"
#error stop
kernel void k() {}
