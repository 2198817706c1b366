// inline_chain.cc - an allocation at the bottom of a chain of 24 inlined
// template functions whose demangled names (~250 bytes each) together
// exceed a location event's 4 KiB: tests/record/symbolize.sh checks that
// the allocation keeps its function and line after symbolization.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

using Payload = std::map<std::string, std::vector<std::pair<std::string, std::string>>>;

template <int N, class T> struct Level {
    __attribute__((always_inline)) static inline void *go(size_t n) {
        return Level<N - 1, T>::go(n + 1);
    }
};

template <class T> struct Level<0, T> {
    __attribute__((always_inline)) static inline void *go(size_t n) {
        return malloc(n * 64);   // the allocation site
    }
};

__attribute__((noinline)) void *deep_alloc(size_t n) { return Level<24, Payload>::go(n); }

int main() {
    size_t kept = 0;
    for (int i = 0; i < 20000; i++) {
        void *p = deep_alloc(1000 + (size_t)(i % 7));
        kept += p != nullptr;
        free(p);
    }
    printf("%zu\n", kept);
    return 0;
}
