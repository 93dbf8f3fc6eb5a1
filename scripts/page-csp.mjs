// Trunk post-build hook (Trunk.toml): gives the page a Content-Security-Policy.
//
// Trunk writes the page's start-up as an inline module script; a policy that allows inline
// script would let injected markup run too. So the script moves to a file of its own (named by
// its hash, like trunk's other files), and the policy allows only the page's own origin:
// scripts and the WebAssembly they compile ('wasm-unsafe-eval'), the worker, fetches of the
// wasm and the bundled examples, styles from its stylesheet (style attributes are allowed: the
// virtualised tables and charts set sizes through them), images from data: and blob: URLs.
// Nothing may be loaded from, or posted to, any other origin.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const POLICY = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data: blob:",
  "style-src 'self'",
  "style-src-attr 'unsafe-inline'",
  "base-uri 'none'",
  "form-action 'none'",
  "object-src 'none'",
].join('; ');

const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) {
  console.error('page-csp: TRUNK_STAGING_DIR is not set (run by trunk as a post_build hook)');
  process.exit(1);
}
const file = path.join(dir, 'index.html');
let html = readFileSync(file, 'utf8');
const inline = [...html.matchAll(/<script type="module">([\s\S]*?)<\/script>/g)];
if (inline.length !== 1 || /<script(?![^>]*\bsrc=)[^>]*>/.test(html.replace(inline[0][0], ''))) {
  console.error(`page-csp: expected exactly one inline script in ${file}, found ${inline.length}; trunk's output changed`);
  process.exit(1);
}
const code = inline[0][1];
const name = `start-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.js`;
writeFileSync(path.join(dir, name), code);
html = html.replace(inline[0][0], `<script type="module" src="./${name}"></script>`);
html = html.replace('<meta charset="utf-8">', `<meta charset="utf-8">\n  <meta http-equiv="Content-Security-Policy" content="${POLICY}">`);
writeFileSync(file, html);
console.log(`page-csp: start-up script moved to ${name}; Content-Security-Policy set`);
