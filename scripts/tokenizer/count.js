// o200k_base token counts, offline: reads a JSON array of strings on stdin, prints a JSON array
// of counts. Special-token text ("<|endoftext|>") is counted as ordinary text, as a model reading
// a tool result sees it.
'use strict';
const { countTokens } = require('gpt-tokenizer/encoding/o200k_base');

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const texts = JSON.parse(input);
  const counts = texts.map((t) => countTokens(t, { disallowedSpecial: new Set() }));
  process.stdout.write(JSON.stringify(counts) + '\n');
});
