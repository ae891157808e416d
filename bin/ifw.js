#!/usr/bin/env node
// Entry point of the `ifw` command; the compiled CLI lives in dist/ (built by `npm ci` via prepare).
import '../dist/cli/main.js';
