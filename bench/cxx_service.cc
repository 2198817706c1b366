// cxx_service.cc - a threaded C++ workload for bench/realprogs.sh: worker
// threads run requests against a shared key-value store (std::map of
// strings under a mutex), build per-request indexes (unordered_map,
// vector, sort), and format replies; many distinct allocation sites in
// inlined standard-library code.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

struct Store {
    std::mutex mu;
    std::map<std::string, std::string> kv;
};

struct Request {
    int id;
    std::vector<std::string> words;
};

std::string make_key(int i) { return "user:" + std::to_string(i % 5000) + ":profile"; }

Request parse(int id, unsigned seed) {
    Request r{id, {}};
    int n = 8 + (int)(seed % 24);
    for (int i = 0; i < n; i++)
        r.words.push_back(std::string(4 + (seed >> i) % 40, (char)('a' + (i + id) % 26)));
    return r;
}

std::string handle(Store &s, const Request &r) {
    std::unordered_map<std::string, int> counts;
    for (const auto &w : r.words)
        counts[w]++;
    std::vector<std::pair<std::string, int>> top(counts.begin(), counts.end());
    std::sort(top.begin(), top.end(),
              [](const auto &a, const auto &b) { return a.second > b.second || (a.second == b.second && a.first < b.first); });
    std::ostringstream out;
    out << "req " << r.id << ":";
    for (size_t i = 0; i < top.size() && i < 5; i++)
        out << ' ' << top[i].first.substr(0, 8) << '=' << top[i].second;
    std::string reply = out.str();
    {
        std::lock_guard<std::mutex> g(s.mu);
        s.kv[make_key(r.id)] = reply;
        if (r.id % 7 == 0)
            s.kv.erase(make_key(r.id / 2));
    }
    return reply;
}

void worker(Store &s, int t, int n, size_t *bytes) {
    unsigned seed = 12345u + (unsigned)t * 7919u;
    std::vector<std::shared_ptr<std::string>> recent;
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        Request r = parse(t * n + i, seed);
        auto reply = std::make_shared<std::string>(handle(s, r));
        *bytes += reply->size();
        recent.push_back(reply);
        if (recent.size() > 256)
            recent.erase(recent.begin(), recent.begin() + 128);
    }
}

} // namespace

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    int n = argc > 2 ? atoi(argv[2]) : 60000;
    Store s;
    std::vector<std::thread> ts;
    std::vector<size_t> bytes((size_t)threads);
    for (int t = 0; t < threads; t++)
        ts.emplace_back(worker, std::ref(s), t, n, &bytes[(size_t)t]);
    for (auto &th : ts)
        th.join();
    size_t total = 0;
    for (size_t b : bytes)
        total += b;
    printf("%zu keys, %zu reply bytes\n", s.kv.size(), total);
    return 0;
}
