// The reference encoder for the tokenizer's tests and benchmark: OpenAI's tiktoken (Rust compiled
// to WebAssembly), GPT-2's vocabulary, ordinary text (no special tokens).
//   node tiktoken_encode.js NODE_MODULES INPUT OUTPUT [REPEATS]
// INPUT is a text file, or a .json file holding an array of strings. OUTPUT gets the ids,
// whitespace-separated, one line per string. Prints the median seconds of REPEATS encodings
// (default 1) of the whole input as "seconds S".
const path = require("path");
const fs = require("fs");
const [modules, input, output, repeats] = process.argv.slice(2);
const { get_encoding } = require(path.resolve(modules, "tiktoken"));
const enc = get_encoding("gpt2");
const texts = input.endsWith(".json") ? JSON.parse(fs.readFileSync(input, "utf8"))
                                      : [fs.readFileSync(input, "utf8")];
const times = [];
let lines = [];
for (let i = 0; i < Number(repeats || 1); ++i) {
  const start = process.hrtime.bigint();
  lines = texts.map((t) => enc.encode_ordinary(t));
  times.push(Number(process.hrtime.bigint() - start) / 1e9);
}
times.sort((a, b) => a - b);
fs.writeFileSync(output, lines.map((ids) => Array.from(ids).join(" ")).join("\n") + "\n");
console.log("seconds " + times[Math.floor(times.length / 2)]);
enc.free();
