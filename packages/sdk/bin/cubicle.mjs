#!/usr/bin/env node
// The `cubicle` command (see `cubicle --help`); the code is in src/cli, built to dist/cli.
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});
