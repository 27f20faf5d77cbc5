// The GL API for engine users: glad's GL 3.3 core loader, loaded by the surface at start-up.
#pragma once

#include <glad/gl.h>
