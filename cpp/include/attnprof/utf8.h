// What valid UTF-8 is, once: ingest repairs trace bytes with it, the HTML escaper replaces
// what it rejects. Each caller keeps its own replacement ('?' in place, U+FFFD in HTML).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace attnprof {

// Length (1..4) of the valid UTF-8 sequence starting at text[at], 0 when the bytes there are
// not one (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF, not cut off by
// the end of text).
size_t utf8_sequence_length(std::string_view text, size_t at);

// The text with every invalid UTF-8 sequence replaced by U+FFFD (EF BF BD), byte by byte.
std::string sanitize_utf8(std::string_view text);

}  // namespace attnprof
