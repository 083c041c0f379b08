// IP literal patterns (no anchors) for schemas that publish a `pattern`: webhook URLs, egress rules.

const OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';

/** IPV4_PATTERN is a dotted-quad IPv4 literal. */
export const IPV4_PATTERN = `(${OCTET}\\.){3}${OCTET}`;

// IPv6 literals in their full and `::`-compressed forms, and with a dotted-quad tail (mapped,
// NAT64): RFC 4291 §2.2. Whether the address is deliverable is the server's later check.
const H = '[0-9A-Fa-f]{1,4}';

/** IPV6_PATTERN is an IPv6 literal without brackets or zone. */
export const IPV6_PATTERN = [
  `(${H}:){7}${H}`,
  `(${H}:){1,7}:`,
  `(${H}:){1,6}:${H}`,
  `(${H}:){1,5}(:${H}){1,2}`,
  `(${H}:){1,4}(:${H}){1,3}`,
  `(${H}:){1,3}(:${H}){1,4}`,
  `(${H}:){1,2}(:${H}){1,5}`,
  `${H}:(:${H}){1,6}`,
  `:((:${H}){1,7}|:)`,
  `(${H}:){6}${IPV4_PATTERN}`,
  `(${H}:){1,4}:${IPV4_PATTERN}`,
  `::(${H}:){0,5}${IPV4_PATTERN}`,
].join('|');
