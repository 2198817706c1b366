// cxx.cc - a C++ program for the recorder tests: operator new/delete,
// standard containers, exceptions thrown through allocating frames, a
// namespaced template function and a function inlined into its caller.
// Its output must be identical with and without the recorder.
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace shapes {
template <typename T>
__attribute__((noinline)) std::vector<T> *make_many(int n)
{
    auto *v = new std::vector<T>();
    for (int i = 0; i < n; i++)
        v->push_back(T(i));
    return v;
}

struct Node {
    std::string name;
    std::unique_ptr<Node> next;
};

static inline Node *push(Node *head, const std::string &name)
{
    Node *n = new Node{name, std::unique_ptr<Node>(head)};
    return n;
}

__attribute__((noinline)) Node *build_list(int n)
{
    Node *head = nullptr;
    for (int i = 0; i < n; i++)
        head = push(head, "node-" + std::to_string(i) + std::string(40, 'x'));
    return head;
}
} // namespace shapes

__attribute__((noinline)) static int risky(int i)
{
    std::vector<std::string> tmp(50, std::string(100, 'a'));
    if (i % 3 == 0)
        throw std::runtime_error("failure " + std::to_string(i));
    return (int)tmp.size() + i;
}

int main()
{
    long sum = 0;
    int caught = 0;
    for (int round = 0; round < 200; round++) {
        std::unique_ptr<std::vector<double>> v(shapes::make_many<double>(1000 + round));
        sum += (long)v->size();
        std::unique_ptr<shapes::Node> list(shapes::build_list(100));
        sum += (long)list->name.size();
        std::map<int, std::string> m;
        for (int i = 0; i < 200; i++)
            m[i] = std::string(64, (char)('a' + i % 26));
        sum += (long)m.size();
        try {
            sum += risky(round);
        } catch (const std::exception &e) {
            caught++;
        }
    }
    std::vector<int *> leak;
    for (int i = 0; i < 1000; i++)
        leak.push_back(new int[64]);
    std::printf("sum=%ld caught=%d\n", sum, caught);
    return caught == 67 ? 0 : 3;
}
