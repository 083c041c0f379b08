package main

// The links this relay serves for the point: accept, original destination, first bytes, one
// question to the point, then what it answered. No decision is taken here: every connection
// waits for the point's verdict, and one the point never judges (it died) is reset.

import (
	"encoding/base64"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// peekMax is how much of a connection's first bytes the point looks at (PEEK_MAX_BYTES in
// peek-destination.ts): past it the point judges what it has.
const peekMax = 16 * 1024

// soOriginalDst is SO_ORIGINAL_DST (linux/netfilter_ipv4.h): where the sandbox's connection was
// going before nftables redirected it to the listener.
const soOriginalDst = 80

// verdictTimeout bounds a connection's wait for the point's verdict (the point answers in well
// under a millisecond; a stuck point must not hold sandbox sockets forever).
const verdictTimeout = 30 * time.Second

func isVerdict(word string) bool {
	switch word {
	case "more", "allow", "refuse", "answer", "hand":
		return true
	}
	return false
}

type waits struct {
	webPorts map[int]bool
	web      time.Duration
	other    time.Duration
}

// listen serves one link: listen <lid> <ip> <port> <web ports,…> <web wait ms> <other wait ms>.
func (r *relay) listen(f []string) {
	lid := f[0]
	port, err1 := strconv.Atoi(f[2])
	webMs, err2 := strconv.Atoi(f[4])
	otherMs, err3 := strconv.Atoi(f[5])
	if err := errors.Join(err1, err2, err3); err != nil {
		r.say("failed %s bad-listen", lid)
		return
	}
	w := waits{webPorts: map[int]bool{}, web: time.Duration(webMs) * time.Millisecond,
		other: time.Duration(otherMs) * time.Millisecond}
	for _, p := range strings.Split(f[3], ",") {
		if n, err := strconv.Atoi(p); err == nil {
			w.webPorts[n] = true
		}
	}
	addr := &net.TCPAddr{IP: net.ParseIP(f[1]), Port: port}
	l, err := net.ListenTCP("tcp4", addr)
	if err != nil {
		r.say("failed %s listen:%s", lid, strings.ReplaceAll(err.Error(), " ", "-"))
		return
	}
	r.mu.Lock()
	r.listeners[lid] = l
	r.mu.Unlock()
	r.say("listening %s", lid)
	go func() {
		for {
			c, err := l.AcceptTCP()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue // e.g. EMFILE, ECONNABORTED: the next one may do
			}
			go r.serve(lid, c, w)
		}
	}()
}

func (r *relay) unlisten(lid string) {
	r.mu.Lock()
	l := r.listeners[lid]
	delete(r.listeners, lid)
	r.mu.Unlock()
	if l != nil {
		l.Close()
	}
	r.say("unlistened %s", lid)
}

// verdict passes the point's answer to the connection waiting for it.
func (r *relay) verdict(f []string) {
	r.mu.Lock()
	wait := r.waiting[f[1]]
	r.mu.Unlock()
	if wait != nil {
		wait <- f
	}
}

// serve reads a connection's first bytes and asks the point until it gives a verdict.
func (r *relay) serve(lid string, client *net.TCPConn, w waits) {
	client.SetNoDelay(true)
	ip, port, err := originalDestination(client)
	if err != nil {
		client.Close()
		return
	}
	src := client.RemoteAddr().(*net.TCPAddr)
	r.mu.Lock()
	r.nextCid++
	cid := "a" + strconv.FormatUint(r.nextCid, 10)
	wait := make(chan []string, 1)
	r.waiting[cid] = wait
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.waiting, cid)
		r.mu.Unlock()
	}()

	peekWait := w.other
	if w.webPorts[port] {
		peekWait = w.web
	}
	deadline := time.Now().Add(peekWait)
	buf := make([]byte, 0, peekMax+1)
	final := false
	for {
		if !final {
			final = readSome(client, &buf, deadline)
		}
		r.say("judge %s %s %s %d %s %d %s %s", cid, lid, src.IP, src.Port, ip, port,
			map[bool]string{false: "0", true: "1"}[final],
			base64.StdEncoding.EncodeToString(buf))
		var f []string
		select {
		case f = <-wait:
		case <-time.After(verdictTimeout):
		}
		if f == nil { // no verdict: the point is gone or stuck
			reset(client, nil)
			return
		}
		switch f[0] {
		case "more":
			if !final {
				continue
			}
			reset(client, nil) // nothing more will come: the point must judge what is there
		case "allow":
			r.allow(cid, client, ip, port, buf)
		case "refuse":
			reset(client, nil)
		case "answer":
			answer(client, f)
		case "hand":
			r.hand(cid, client, f, buf)
		}
		return
	}
}

// readSome reads what has arrived (waiting for at least one byte until the deadline); true when
// no more bytes will be read for peeking: the deadline passed, the client ended or the cap is met.
func readSome(client *net.TCPConn, buf *[]byte, deadline time.Time) bool {
	client.SetReadDeadline(deadline)
	defer client.SetReadDeadline(time.Time{})
	b := *buf
	n, err := client.Read(b[len(b):cap(b)])
	*buf = b[:len(b)+n]
	return err != nil || len(*buf) >= peekMax
}

func (r *relay) allow(cid string, client *net.TCPConn, ip string, port int, first []byte) {
	// Known (and so cuttable) before the dial: a policy change meanwhile resets the client.
	conn := &connection{client: client}
	r.mu.Lock()
	r.conns[cid] = conn
	r.mu.Unlock()
	upstream, err := net.DialTCP("tcp4", nil, &net.TCPAddr{IP: net.ParseIP(ip), Port: port})
	if err == nil {
		upstream.SetNoDelay(true)
		if len(first) > 0 {
			_, err = upstream.Write(first)
		}
	}
	if err != nil {
		reset(client, upstream)
		r.forget(cid)
		return
	}
	r.join(cid, conn, upstream)
}

// join relays a judged connection until both sides are done; `cut <cid>` resets it.
func (r *relay) join(cid string, conn *connection, upstream *net.TCPConn) {
	r.mu.Lock()
	conn.upstream = upstream
	r.conns[cid] = conn
	r.mu.Unlock()
	r.run(cid, conn)
}

func (r *relay) forget(cid string) {
	r.mu.Lock()
	delete(r.conns, cid)
	r.mu.Unlock()
	r.say("closed %s", cid)
}

// answer sends the point's bytes (a 403) and closes once the client has had time to read them:
// closing with unread request bytes would reset the connection and could lose the answer.
func answer(client *net.TCPConn, f []string) {
	defer client.Close()
	if len(f) < 3 {
		return
	}
	body, err := base64.StdEncoding.DecodeString(f[2])
	if err != nil {
		return
	}
	client.Write(body)
	client.CloseWrite()
	client.SetReadDeadline(time.Now().Add(10 * time.Second))
	io.Copy(io.Discard, client)
}

// hand joins the connection to the point itself (TLS terminated there for a bound credential).
func (r *relay) hand(cid string, client *net.TCPConn, f []string, first []byte) {
	if len(f) < 4 {
		reset(client, nil)
		return
	}
	point, err := net.DialTCP("tcp4", nil, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: atoi(f[2])})
	if err != nil {
		reset(client, nil)
		return
	}
	point.SetNoDelay(true)
	if _, err := point.Write([]byte(f[3] + "\n")); err != nil { // the point has the first bytes
		reset(client, point)
		return
	}
	r.join(cid, &connection{client: client}, point)
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// originalDestination reads SO_ORIGINAL_DST: a sockaddr_in in the first 8 bytes.
func originalDestination(c *net.TCPConn) (string, int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return "", 0, err
	}
	var mreq *syscall.IPv6Mreq
	var serr error
	err = raw.Control(func(fd uintptr) {
		mreq, serr = syscall.GetsockoptIPv6Mreq(int(fd), syscall.SOL_IP, soOriginalDst)
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return "", 0, os.NewSyscallError("getsockopt", err)
	}
	a := mreq.Multiaddr
	port := int(a[2])<<8 | int(a[3])
	return net.IPv4(a[4], a[5], a[6], a[7]).String(), port, nil
}
