package main

import (
	"fmt"
	"io"
	"net"
	"strings"
)

// greet prints where the server can be reached and where its data is
// kept (data: dataLine's "sirtommy-data/ (SQLite)"). Its first line,
// "listening on URL", is the one scripts and tests read; the lines after it
// are for the person who started it. A server bound to every interface
// (":8080", "0.0.0.0:8080", "[::]:8080") is named by localhost, which every
// browser opens, and by the machine's own network addresses, for a second
// device on the same network.
func greet(w io.Writer, addr net.Addr, data string) {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		fmt.Fprintf(w, "listening on http://%s\n", addr)
		return
	}
	ip := net.ParseIP(host)
	wildcard := host == "" || (ip != nil && ip.IsUnspecified())
	url := "http://" + net.JoinHostPort(host, port)
	if wildcard {
		url = "http://localhost:" + port
	}
	fmt.Fprintf(w, "listening on %s\n", url)
	fmt.Fprintf(w, "  Open %s in a browser to play; a private window or a second browser is a second player.\n", url)
	if wildcard {
		for _, lan := range lanAddrs() {
			fmt.Fprintf(w, "  On your network: http://%s\n", net.JoinHostPort(lan, port))
		}
	}
	fmt.Fprintf(w, "  Data: %s\n", data)
	fmt.Fprintln(w, "  Stop with Ctrl-C.")
}

// lanAddrs lists this machine's IPv4 addresses other than loopback and
// link-local ones: the ones another device on the network may reach.
func lanAddrs() []string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip := n.IP.To4()
		if ip == nil || ip.IsLoopback() || ip.IsLinkLocalUnicast() {
			continue
		}
		out = append(out, ip.String())
	}
	return out
}

// listenURL reads the URL from the first line greet prints.
func listenURL(line string) (string, bool) {
	first, _, complete := strings.Cut(line, "\n")
	if !complete {
		return "", false // the line is still being written
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(first), "listening on ")
	return url, ok && url != ""
}
