// sessions.cc - the C++ example `make demo` profiles after leaky.c: a toy
// session server with worker threads. Each worker opens sessions (a map of
// string attributes, a vector of events), renders a reply with temporary
// strings, and closes the session again; one code path forgets to close
// sessions that ended with an error, so their memory leaks.
//
//   memtrace run -o sessions.ctf -- build/examples/sessions
//   memtrace top --by live sessions.ctf      # the leak: open_session
//   memtrace top --by temporary sessions.ctf # short-lived strings: render_reply
//
// Built at -O2 -g like a release build: allocations pass through
// std::allocator, std::map and std::string, and memtrace reports the
// functions below as the allocation sites.
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace demo {

struct Session {
    int id;
    std::map<std::string, std::string> attributes;
    std::vector<std::string> events;
};

class Registry {
public:
    __attribute__((noinline)) Session *open_session(int id)
    {
        auto s = std::make_unique<Session>();
        s->id = id;
        s->attributes["user"] = "user-" + std::to_string(id % 977);
        s->attributes["agent"] = std::string(80, 'a' + id % 26);
        s->attributes["token"] = std::string(200, 'k');
        s->events.resize(16);
        std::lock_guard<std::mutex> g(lock_);
        Session *raw = s.get();
        open_[id] = std::move(s);
        return raw;
    }

    __attribute__((noinline)) void close_session(int id)
    {
        std::lock_guard<std::mutex> g(lock_);
        open_.erase(id);
    }

    size_t size()
    {
        std::lock_guard<std::mutex> g(lock_);
        return open_.size();
    }

private:
    std::mutex lock_;
    std::map<int, std::unique_ptr<Session>> open_;
};

__attribute__((noinline)) static size_t render_reply(const Session &s)
{
    // temporary strings: built, measured, thrown away
    std::string reply = "HTTP/1.1 200 OK\r\nX-Session: " + std::to_string(s.id) + "\r\n";
    for (const auto &kv : s.attributes)
        reply += kv.first + ": " + kv.second + "\r\n";
    return reply.size();
}

__attribute__((noinline)) static void log_event(Session &s, int n)
{
    // the line is built in temporaries; only a short tag (no heap) is kept
    std::string line = "event " + std::to_string(n) + std::string(48, '.');
    s.events[n % s.events.size()] = line.substr(0, 12);
}

static void worker(Registry *reg, int first, int count, size_t *bytes)
{
    for (int i = first; i < first + count; i++) {
        Session *s = reg->open_session(i);
        for (int k = 0; k < 8; k++)
            log_event(*s, k);
        *bytes += render_reply(*s);
        if (i % 20 != 7) // sessions that ended with an error stay open: the leak
            reg->close_session(i);
    }
}

} // namespace demo

int main()
{
    // the registry lives as long as the process and is never deleted: the
    // sessions left open in it are still allocated at exit
    demo::Registry &reg = *new demo::Registry;
    const int threads = 4, per_thread = 10000;
    std::vector<std::thread> pool;
    std::vector<size_t> bytes(threads);
    for (int t = 0; t < threads; t++)
        pool.emplace_back(demo::worker, &reg, t * per_thread, per_thread, &bytes[t]);
    for (auto &th : pool)
        th.join();
    size_t total = 0;
    for (size_t b : bytes)
        total += b;
    std::printf("%d sessions served, %zu reply bytes, %zu still open\n", threads * per_thread,
                total, reg.size());
    return 0;
}
