// egress-relay is the local egress point's data path. The point (Node,
// packages/egress/src/point/splice-relay.ts) keeps every decision: policy, names, events,
// credentials. This program moves bytes and, for the sandbox links it is asked to serve, does the
// per-connection work that needs no decision: it accepts the sandbox's connections on the link's
// intercept listener, reads their original destination and first bytes, asks the point to judge
// them (one line each way), and then dials, refuses, answers or hands back as told. An allowed
// connection is joined here with io.Copy, which is splice(2) between two TCP sockets on Linux: no
// byte is copied through user space. Node's own accept, socket objects and stream pipe put four
// wake-ups of its event loop on a handshake's path and copied every chunk through its heap
// (bench:egress: setup 1.41x direct, 0.52 of direct throughput); here Node wakes once per
// connection, to decide. This program never reads a name, never parses a ClientHello or a
// request (the point's peek-destination.ts does, from the bytes sent to it) and connects only
// where the point said.
//
// Connections the point accepted itself (a link it serves in Node, e.g. after this program died)
// can still be handed over once they carry a lot: pidfd_getfd(2) copies their sockets here.
//
// Standard library only, built once per machine into the tools cache (tool.mjs beside this file,
// from `npm test`'s bootstrap, `npm start` and bench:egress).
// Protocol, one line each way on stdin/stdout:
//
//	point → relay: listen <lid> <ip> <port> <web ports,…> <web wait ms> <other wait ms>
//	               unlisten <lid>   (stop accepting; connections go on until cut)
//	               more <cid>       (the bytes so far name nothing yet: read on)
//	               allow <cid>      (dial the original destination, send the bytes, join)
//	               refuse <cid>     (reset the sandbox's side)
//	               answer <cid> <base64>   (send these bytes, then close: an HTTP 403)
//	               hand <cid> <port> <token>  (connect to the point on 127.0.0.1:<port>, send
//	                                 "<token>\n" and the bytes, join: TLS terminated there)
//	               splice <id> <client fd> <upstream fd>   (descriptors in the point's process)
//	               cut <id>          (the policy no longer allows it: reset the client, close)
//	relay → point: ready listen      (pidfd_open of the point worked; `listen` is understood:
//	                                 a relay built before it said `ready` alone)
//	               listening <lid> | unlistened <lid> | failed <lid> <why>
//	               judge <cid> <lid> <src ip> <src port> <dst ip> <dst port> <final 0|1> <base64>
//	                                 (final: no more bytes will come, judge what is there)
//	               took <id>         (the relay holds its own copies of both sockets)
//	               failed <id> <why> (it does not: the point relays this connection itself)
//	               closed <id>       (both sides are closed; also a judged connection's end)
//
// The relay exits when its stdin closes (the point is gone), resetting every connection it holds.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Linux system call numbers, the same on every architecture since 5.3/5.6 (the unified table).
const (
	sysPidfdOpen  = 434
	sysPidfdGetfd = 438
)

type connection struct {
	client   *net.TCPConn
	upstream *net.TCPConn
}

type relay struct {
	pidfd int
	out   *bufio.Writer
	outMu sync.Mutex
	mu    sync.Mutex
	conns map[string]*connection
	// Links served here (accept.go): listeners by lid, connections waiting for a verdict by cid.
	listeners map[string]*net.TCPListener
	waiting   map[string]chan []string
	nextCid   uint64
}

func (r *relay) say(format string, args ...any) {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	fmt.Fprintf(r.out, format+"\n", args...)
	r.out.Flush()
}

// version is the hash of this program's source, set by tool.mjs at build time.
var version = "dev"

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Println("egress-relay", version)
		return
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: egress-relay <pid of the egress point>")
		os.Exit(2)
	}
	pid, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "egress-relay: bad pid", os.Args[1])
		os.Exit(2)
	}
	pidfd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if errno != 0 {
		fmt.Fprintln(os.Stderr, "egress-relay: pidfd_open:", errno)
		os.Exit(3)
	}
	r := &relay{
		pidfd:     int(pidfd),
		out:       bufio.NewWriter(os.Stdout),
		conns:     map[string]*connection{},
		listeners: map[string]*net.TCPListener{},
		waiting:   map[string]chan []string{},
	}
	r.say("ready listen")
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			break
		}
		fields := strings.Fields(line)
		switch {
		case len(fields) == 4 && fields[0] == "splice":
			r.splice(fields[1], fields[2], fields[3])
		case len(fields) == 2 && fields[0] == "cut":
			r.cut(fields[1])
		case len(fields) == 7 && fields[0] == "listen":
			r.listen(fields[1:])
		case len(fields) == 2 && fields[0] == "unlisten":
			r.unlisten(fields[1])
		case len(fields) >= 2 && isVerdict(fields[0]):
			r.verdict(fields)
		default:
			fmt.Fprintf(os.Stderr, "egress-relay: unknown command %q\n", strings.TrimSpace(line))
		}
	}
	// The point is gone: nothing may outlive its decisions.
	r.mu.Lock()
	for _, l := range r.listeners {
		l.Close()
	}
	for id := range r.conns {
		r.cutLocked(id)
	}
	for _, wait := range r.waiting {
		close(wait)
	}
	r.waiting = map[string]chan []string{}
	r.mu.Unlock()
}

func (r *relay) splice(id, clientFd, upstreamFd string) {
	client, err := r.take(clientFd)
	if err != nil {
		r.say("failed %s client:%s", id, err)
		return
	}
	upstream, err := r.take(upstreamFd)
	if err != nil {
		client.Close()
		r.say("failed %s upstream:%s", id, err)
		return
	}
	conn := &connection{client: client, upstream: upstream}
	r.mu.Lock()
	r.conns[id] = conn
	r.mu.Unlock()
	r.say("took %s", id)
	go r.run(id, conn)
}

// take copies descriptor `fdText` of the point into this process as a TCP connection of its own.
func (r *relay) take(fdText string) (*net.TCPConn, error) {
	fd, err := strconv.Atoi(fdText)
	if err != nil {
		return nil, errors.New("bad-fd")
	}
	own, _, errno := syscall.Syscall(sysPidfdGetfd, uintptr(r.pidfd), uintptr(fd), 0)
	if errno != 0 {
		return nil, errors.New("pidfd_getfd-" + strings.ReplaceAll(errno.Error(), " ", "-"))
	}
	file := os.NewFile(own, "socket")
	c, err := net.FileConn(file) // a descriptor of its own, non-blocking, in Go's poller
	file.Close()
	if err != nil {
		return nil, errors.New("not-a-socket")
	}
	conn, ok := c.(*net.TCPConn)
	if !ok {
		c.Close()
		return nil, errors.New("not-tcp")
	}
	conn.SetNoDelay(true)
	return conn, nil
}

// run moves bytes both ways until both are done: an orderly end of one direction is passed on as
// a FIN (half-close, as HTTP clients may do); an error either way resets the client and closes
// both, as the point's own pipe did.
func (r *relay) run(id string, conn *connection) {
	defer func() {
		r.mu.Lock()
		delete(r.conns, id)
		r.mu.Unlock()
		r.say("closed %s", id)
	}()
	client, upstream := conn.client, conn.upstream
	done := make(chan error, 2)
	go func() {
		_, err := io.Copy(upstream, client) // splice(2): client → pipe → upstream
		if err == nil {
			upstream.CloseWrite()
		}
		done <- err
	}()
	go func() {
		_, err := io.Copy(client, upstream) // splice(2): upstream → pipe → client
		if err == nil {
			client.CloseWrite()
		}
		done <- err
	}()
	for i := 0; i < 2; i++ {
		if err := <-done; err != nil && !errors.Is(err, net.ErrClosed) {
			reset(client, upstream)
		}
	}
	client.Close()
	upstream.Close()
}

func reset(client, upstream *net.TCPConn) {
	client.SetLinger(0)
	client.Close()
	if upstream != nil {
		upstream.Close()
	}
}

func (r *relay) cut(id string) {
	r.mu.Lock()
	r.cutLocked(id)
	r.mu.Unlock()
}

func (r *relay) cutLocked(id string) {
	if conn := r.conns[id]; conn != nil {
		reset(conn.client, conn.upstream)
	}
}
