// main() for sample executables (the duet-engine-main library).
#include "duet/engine/app/registry.hpp"

int main(int argc, char** argv) {
    return duet::engine::runMain(argc, argv);
}
