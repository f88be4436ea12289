// The reference encoder for the tokenizer's tests and benchmark: OpenAI's tiktoken (Rust compiled
// to WebAssembly), ordinary text (no special tokens).
//   node tiktoken_encode.js NODE_MODULES INPUT OUTPUT [REPEATS] [ENCODER_JSON]
// INPUT is a text file, or a .json file holding an array of strings. OUTPUT gets the ids,
// whitespace-separated, one line per string. Prints the median seconds of REPEATS encodings
// (default 1) of the whole input as "seconds S". The vocabulary is GPT-2's, or with
// ENCODER_JSON a byte-level BPE in GPT-2's format (one that `tokenize train` wrote): its tokens
// become tiktoken's ranks in id order (a trained vocabulary's ids are its merge order), with
// GPT-2's pattern, and a last token <|endoftext|> as the special token.
const path = require("path");
const fs = require("fs");
const [modules, input, output, repeats, encoderJson] = process.argv.slice(2);
const tiktoken = require(path.resolve(modules, "tiktoken"));
const gpt2 = require(path.resolve(modules, "tiktoken", "encoders", "gpt2.json"));

function customEncoding(file) {
  // GPT-2's bytes_to_unicode(), inverted: the character that stands for each byte.
  const bytes = [];
  for (let b = 33; b <= 126; ++b) bytes.push(b);
  for (let b = 161; b <= 172; ++b) bytes.push(b);
  for (let b = 174; b <= 255; ++b) bytes.push(b);
  const chars = bytes.slice();
  for (let b = 0, n = 0; b < 256; ++b)
    if (!bytes.includes(b)) bytes.push(b), chars.push(256 + n++);
  const byteOf = new Map(bytes.map((b, i) => [String.fromCodePoint(chars[i]), b]));
  const vocab = JSON.parse(fs.readFileSync(file, "utf8"));
  const byId = [];
  for (const [token, id] of Object.entries(vocab))
    byId[id] = Buffer.from(Array.from(token).map((c) => byteOf.get(c)));
  const special = {};
  const endOfText = vocab["<|endoftext|>"];
  if (endOfText === byId.length - 1) {
    byId.pop();
    special["<|endoftext|>"] = endOfText;
  }
  // tiktoken's rank file, in its package's one-line form: "! FIRST_RANK token64 token64 ...".
  const ranks = "! 0 " + byId.map((b) => b.toString("base64")).join(" ");
  return new tiktoken.Tiktoken(ranks, special, gpt2.pat_str);
}

const enc = encoderJson ? customEncoding(encoderJson) : tiktoken.get_encoding("gpt2");
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
