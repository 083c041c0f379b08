module cubicle.local/egress-relay

go 1.22
