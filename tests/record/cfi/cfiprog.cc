/*
 * cfiprog.cc - a C++ program for tests/record/cfi.sh, built with -O2
 * -fomit-frame-pointer: allocations whose stacks run through libstdc++.
 *
 *   cfiprog-cxx sort N       std::sort of strings with a comparator that
 *                            allocates (cxx_less)
 *   cfiprog-cxx function N   allocations in a lambda called through std::function
 *   cfiprog-cxx throw N      exceptions thrown three calls deep and caught,
 *                            allocating in the thrower, the exception's
 *                            construction (__cxa_allocate_exception) and the handler
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

static volatile long sink;

__attribute__((noipa)) static bool cxx_less(const std::string &a, const std::string &b)
{
    std::string copy = a + "-a comparator that allocates a string long enough to be on the heap";
    sink += (long)copy.size();
    return a < b;
}

__attribute__((noipa)) static void cxx_sort(long round)
{
    std::vector<std::string> v;
    for (int k = 0; k < 48; k++)
        v.push_back(std::to_string((k * 7919 + round) % 101));
    std::sort(v.begin(), v.end(), cxx_less);
}

__attribute__((noipa)) static void cxx_call(const std::function<void(size_t)> &f, size_t n)
{
    f(n);
}

__attribute__((noipa)) static void cxx_thrower3(long i)
{
    char *p = static_cast<char *>(malloc(100 + (size_t)(i % 50)));
    if (p)
        p[0] = 1;
    free(p);
    throw std::runtime_error("a message long enough that std::runtime_error keeps it on the heap " +
                             std::to_string(i));
}

__attribute__((noipa)) static void cxx_thrower2(long i)
{
    cxx_thrower3(i + 1);
    sink++;
}

__attribute__((noipa)) static void cxx_thrower1(long i)
{
    cxx_thrower2(i + 1);
    sink++;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: cfiprog-cxx sort|function|throw N\n");
        return 2;
    }
    long n = std::atol(argv[2]);
    if (!std::strcmp(argv[1], "sort")) {
        for (long i = 0; i < n; i++)
            cxx_sort(i);
    } else if (!std::strcmp(argv[1], "function")) {
        std::vector<char> keep(1000);
        std::function<void(size_t)> f = [&keep](size_t m) {
            std::vector<char> v(m);
            sink += (long)v.size() + keep[0];
        };
        for (long i = 0; i < n; i++)
            cxx_call(f, 200 + (size_t)(i % 100));
    } else if (!std::strcmp(argv[1], "throw")) {
        for (long i = 0; i < n; i++) {
            try {
                cxx_thrower1(i);
            } catch (const std::exception &e) {
                std::string s = std::string("caught: ") + e.what();
                sink += (long)s.size();
            }
        }
    } else {
        std::fprintf(stderr, "cfiprog-cxx: unknown mode %s\n", argv[1]);
        return 2;
    }
    return (int)(sink & 0);
}
