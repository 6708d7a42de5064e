// weft-bench io's Go anchor: the echo server as a goroutine per connection
// (bench/io_go.cpp builds and runs it). Listens on 127.0.0.1 on an ephemeral
// port, prints the port on stdout, then echoes requests of SIZE bytes on
// every connection until EOF, until killed. GOMAXPROCS comes from the bench.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
)

func serve(c net.Conn, size int) {
	defer c.Close()
	buf := make([]byte, size)
	for {
		if _, err := io.ReadFull(c, buf); err != nil {
			return
		}
		if _, err := c.Write(buf); err != nil {
			return
		}
	}
}

func main() {
	size, err := strconv.Atoi(os.Args[1])
	if err != nil || size <= 0 {
		fmt.Fprintln(os.Stderr, "usage: io_echo SIZE")
		os.Exit(2)
	}
	ls, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(1)
	}
	fmt.Println(ls.Addr().(*net.TCPAddr).Port)
	for {
		c, err := ls.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "accept:", err)
			os.Exit(1)
		}
		go serve(c, size) // Go's TCP sockets have TCP_NODELAY set by default
	}
}
