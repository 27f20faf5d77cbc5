// A function for il_test's clCompileProgram/clLinkProgram case: SPIR-V (Linkage capability)
// exporting twice(), linked with an OpenCL C kernel that calls it.
float twice(float x) { return 2.0f * x + 1.0f; }
