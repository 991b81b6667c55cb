// gospin - a CPU-bound Go program with known functions, for the tests of
// Go without symbols (tests/unit/test_gopclntab.c, tests/integration/
// test_go.py): built here with the standard library only, then stripped.
// main.work calls main.leaf (a frameless leaf: frame pointers alone skip
// its caller) and main.middle, which calls main.leaf too; a second
// goroutine runs main.other. Usage: gospin SECONDS
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

//go:noinline
func leaf(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i % 7
	}
	return s
}

//go:noinline
func middle(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += leaf(3) + i%3
	}
	return s
}

//go:noinline
func work(end time.Time) int {
	t := 0
	for time.Now().Before(end) {
		t += leaf(200000)
		t += middle(100000)
	}
	return t
}

//go:noinline
func other(end time.Time, done chan<- int) {
	buf := make([]byte, 0, 1<<16)
	n := 0
	for time.Now().Before(end) {
		buf = buf[:0]
		for i := 0; i < 4096; i++ {
			buf = strconv.AppendInt(buf, int64(i*n), 10)
		}
		n++
	}
	done <- n
}

func main() {
	secs := 2.0
	if len(os.Args) > 1 {
		secs, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	done := make(chan int)
	go other(end, done)
	fmt.Println(work(end), <-done)
}
