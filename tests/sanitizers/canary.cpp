// Sanitizer builds only: one bug of each kind the sanitizers must turn into a failed process, so
// that ctest shows the options of env.sh make a report fail its entry (sanitizer_canary_*).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

volatile int g_sink = 0;
int g_racy = 0;

// UBSan's object-size check would report the read first: this one is ASan's.
__attribute__((no_sanitize("undefined"))) int heapOverflow() {
    char* p = static_cast<char*>(std::malloc(16));
    std::memset(p, 0, 16);
    g_sink = p[16 + g_sink]; // one past the end
    std::free(p);
    return 0;
}

int leak() {
    void* volatile p = std::malloc(4096); // lost when main returns
    g_sink = p != nullptr;
    p = nullptr;
    return 0;
}

int undefinedBehaviour() {
    volatile int big = 0x7fffffff;
    g_sink = big + 1; // signed overflow
    return 0;
}

int race() {
    std::thread t([] { ++g_racy; });
    ++g_racy;
    t.join();
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "";
    if (!std::strcmp(what, "heap-overflow"))
        return heapOverflow();
    if (!std::strcmp(what, "leak"))
        return leak();
    if (!std::strcmp(what, "undefined"))
        return undefinedBehaviour();
    if (!std::strcmp(what, "race"))
        return race();
    std::fprintf(stderr, "usage: %s heap-overflow|leak|undefined|race\n", argv[0]);
    return 2;
}
