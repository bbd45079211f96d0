// Strips the comments (and blank lines) from the page's JavaScript modules
// in the assembled site, in place: the source in web/ keeps them, the
// download does not (a sixth of the page's gzipped JavaScript). Parsing with
// acorn (the parser emscripten itself runs) keeps strings, regular
// expressions and template literals intact; a file acorn cannot parse stops
// the build.
// Usage: NODE_PATH=/usr/share/nodejs node strip_comments.cjs SITE_DIR
'use strict';
const acorn = require('acorn');
const fs = require('fs');
const path = require('path');

function strip(text, file) {
  const comments = [];
  try {
    acorn.parse(text, { ecmaVersion: 'latest', sourceType: 'module', onComment: (_block, _text, start, end) => comments.push([start, end]) });
  } catch (error) {
    throw new Error(`${file}: ${error.message}`);
  }
  let out = '';
  let at = 0;
  for (const [start, end] of comments) {
    out += text.slice(at, start);
    at = end;
  }
  out += text.slice(at);
  return `${out.split('\n').map((line) => line.trimEnd()).filter((line) => line.trim() !== '').join('\n')}\n`;
}

function walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full);
    else if (entry.name.endsWith('.js')) fs.writeFileSync(full, strip(fs.readFileSync(full, 'utf8'), full));
  }
}

walk(process.argv[2]);
