// The one JSON parser of the core: every document (config, search, what-if,
// op inputs, Hugging Face and SimuMax files, embedded presets) goes through
// parse_document. Beyond RFC 8259 syntax it refuses, each with a path-named
// issue, what nlohmann's default parser accepts silently or cannot bound:
//   - a key given twice in one object (nlohmann keeps the last one);
//   - nesting deeper than kMaxJsonDepth (later recursive walks would overflow
//     the stack: a browser tab's WASM stack is small);
//   - a NUL byte (nlohmann stops reading there, so "{}\0anything" parsed);
//   - UTF-16 / UTF-32 text (named as such, with its byte order);
//   - documents over kMaxDocumentBytes;
//   - numbers beyond double range, integers beyond int64 (nlohmann keeps
//     2^63..2^64-1 unsigned; an int64 reader would echo them negative).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

#include "trainsim/issue.h"

namespace trainsim::schema {

// Largest document read: a config is a few KiB, a SimuMax system with its
// measured tables about 100 KiB; the DOM of a hostile 4 MiB document (a million
// empty arrays) already takes about a second and 170 MiB to build, so a larger
// one would break the 2 s / 512 MiB bound every command keeps (README "Reliability").
inline constexpr size_t kMaxDocumentBytes = size_t{4} << 20;
// Deepest nesting of arrays and objects a document may have. Configs need 6.
inline constexpr size_t kMaxJsonDepth = 64;
// Duplicate keys and out-of-range integers reported before the parser stops
// reading the document.
inline constexpr size_t kMaxDocumentProblems = 20;

// Parses a whole document into `out`. Bad JSON becomes issues whose paths
// start with `path` (a JSON pointer prefix, "" for the document itself):
// "invalid JSON at byte N: ..." for a syntax error at `path`; a duplicate key
// or too deep nesting at the pointer of the offending key or container.
bool parse_document(std::string_view text, const std::string& path, nlohmann::json& out,
                    Issues& issues);

// A JSON pointer to show in a message: pointers longer than max_chars (a 3 MB
// key) are cut, with "..." and the number of characters left out; a pointer
// it already cut is returned as it is.
std::string shorten_pointer(const std::string& pointer, size_t max_chars = 200);

// User text echoed in a message, cut after max_chars with "...".
std::string excerpt(std::string_view text, size_t max_chars = 60);

}  // namespace trainsim::schema
