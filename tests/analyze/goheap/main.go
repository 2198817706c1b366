// goheap: writes a Go heap profile (runtime/pprof) after allocating from
// known functions, for tests/analyze/profiles.sh. Usage:
//   goheap OUT.pb.gz RATE GROW
// RATE is runtime.MemProfileRate (1: every allocation, exact values; 0:
// Go's default, 512 KiB); GROW multiplies what growSite allocates (diff).
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
)

var keep [][]byte

//go:noinline
func keepSmall(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 4096))
	}
}

//go:noinline
func keepLarge(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 1<<20))
	}
}

//go:noinline
func growSite(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 65536))
	}
}

var sink []byte

//go:noinline
func dropTemp(n int) {
	for i := 0; i < n; i++ {
		sink = make([]byte, 8192)
	}
}

func main() {
	rate, _ := strconv.Atoi(os.Args[2])
	grow, _ := strconv.Atoi(os.Args[3])
	if rate > 0 {
		runtime.MemProfileRate = rate
	}
	keepSmall(2000)  // 8 MB live
	keepLarge(24)    // 24 MiB live
	growSite(64 * grow)
	dropTemp(4000) // 32 MB allocated, not live
	sink = nil
	// the heap profile is as of the last completed GC cycle, and a cycle
	// publishes the one before: two make it current
	runtime.GC()
	runtime.GC()
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		panic(err)
	}
	f.Close()
	runtime.KeepAlive(keep)
}
